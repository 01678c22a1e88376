/**
 * The search query language, one for both engines: words (all must match),
 * "quoted phrases" (the words in that order) and prefix* (a word's start).
 * Matching is by words, case-insensitive: anything that is not a letter or a
 * digit separates words, as both engines' tokenizers do. The query is parsed
 * here and written out in each engine's own syntax from the parsed terms, so
 * no engine ever sees text it could take for an operator.
 */
import { InvalidInputError } from '../model/errors.js';
import type { SearchTerm } from '../model/search.js';

export type { SearchTerm };

// Made on first use: a Unicode-property expression costs a tenth of a millisecond to build, and
// every hook and command loads this module but few search.
let wordPattern: RegExp | undefined;
const wordRegExp = (): RegExp => (wordPattern ??= /[\p{L}\p{N}]+/gu);
const MAX_TERMS = 32;
const MAX_QUERY_CHARS = 1_000;

function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(wordRegExp()) ?? []).map((word) => word.slice(0, 100));
}

/** The terms of a query, or a one-line error that says what is wrong with it. */
export function parseSearchQuery(query: string): SearchTerm[] {
  if (query.length > MAX_QUERY_CHARS) throw new InvalidInputError(`the query is longer than ${MAX_QUERY_CHARS} characters`);
  if ((query.match(/"/g) ?? []).length % 2 === 1) throw new InvalidInputError('the query has an unbalanced quote: close the "phrase"');
  const terms: SearchTerm[] = [];
  // Phrases first (between quotes), then the words and prefixes between them.
  const parts = query.split('"');
  parts.forEach((part, index) => {
    if (index % 2 === 1) {
      const words = wordsOf(part);
      if (words.length === 1) terms.push({ kind: 'word', word: words[0] as string });
      else if (words.length > 1) terms.push({ kind: 'phrase', words });
      return;
    }
    for (const chunk of part.split(/\s+/)) {
      if (chunk === '') continue;
      const words = wordsOf(chunk);
      if (words.length === 0) {
        if (chunk.includes('*')) throw new InvalidInputError(`a prefix needs letters before its *: ${JSON.stringify(chunk)}`);
        continue;
      }
      const prefix = chunk.endsWith('*');
      words.forEach((word, at) => terms.push(prefix && at === words.length - 1 ? { kind: 'prefix', word } : { kind: 'word', word }));
    }
  });
  if (terms.length === 0) throw new InvalidInputError('say what to search for: words, "a phrase" or a prefix*');
  if (terms.length > MAX_TERMS) throw new InvalidInputError(`the query has more than ${MAX_TERMS} words`);
  return terms;
}

export interface SnippetPart {
  text: string;
  match: boolean;
}

/** Around the first match, at most `width` characters of the body, the matched words marked. */
export function snippet(body: string, terms: SearchTerm[], width = 160): SnippetPart[] {
  const whole = new Set<string>();
  const prefixes: string[] = [];
  for (const term of terms) {
    if (term.kind === 'word') whole.add(term.word);
    else if (term.kind === 'prefix') prefixes.push(term.word);
    else for (const word of term.words) whole.add(word);
  }
  const matches: Array<[number, number]> = [];
  for (const found of body.matchAll(wordRegExp())) {
    const word = found[0].toLowerCase();
    if (whole.has(word) || prefixes.some((prefix) => word.startsWith(prefix))) matches.push([found.index, found.index + found[0].length]);
  }
  const first = matches[0]?.[0] ?? 0;
  const start = Math.max(0, Math.min(first - Math.floor(width / 4), body.length - width));
  const end = Math.min(body.length, start + width);
  const parts: SnippetPart[] = [];
  let at = start;
  const plain = (text: string): void => {
    if (text !== '') parts.push({ text: text.replace(/\s+/g, ' '), match: false });
  };
  if (start > 0) parts.push({ text: '…', match: false });
  for (const [from, to] of matches) {
    if (to <= start || from >= end) continue;
    plain(body.slice(at, Math.max(at, from)));
    parts.push({ text: body.slice(Math.max(from, start), Math.min(to, end)), match: true });
    at = Math.min(to, end);
  }
  plain(body.slice(at, end));
  if (end < body.length) parts.push({ text: '…', match: false });
  return parts;
}
