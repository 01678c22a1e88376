/**
 * Ids given back as they were shown: a whole id, or the start of it or of its short form
 * (model/short-id.ts). One rule for every kind of id: an exact id wins, one match is it, none is
 * nobody's, and more than one is refused with the candidates listed.
 */
import { BusError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import { MIN_ID_PREFIX, namesId, shortId } from '../model/short-id.js';

/** Candidates an ambiguous start lists, at most. */
const SHOWN = 5;

/** The start of an id that names more than one: bad usage (exit code 2), with what it could mean. */
export class AmbiguousIdError extends BusError {
  readonly candidates: string[];
  constructor(message: string, candidates: string[]) {
    super(message, 2);
    this.candidates = candidates;
  }
}

export interface IdCandidate<T> {
  /** What the candidate is, shown when the start is ambiguous; candidates with one key are one. */
  key: string;
  /** The ids that name it (its own; for a thread, also its messages'). */
  ids: string[];
  item: T;
  /** A few words that tell candidates apart when the start is ambiguous (a title, a preview). */
  hint?: string;
}

/**
 * The one candidate `given` names (see namesId), or null when none does. `kind` names what the ids
 * are in the refusal of an ambiguous start ("task", "message", "thread").
 */
export function pickNamed<T>(given: string, kind: string, candidates: IdCandidate<T>[]): T | null {
  const text = given.trim();
  const exact = candidates.find((candidate) => candidate.ids.includes(text));
  if (exact) return exact.item;
  const named = new Map<string, IdCandidate<T>>();
  for (const candidate of candidates) if (candidate.ids.some((id) => namesId(text, id))) named.set(candidate.key, candidate);
  const found = [...named.values()];
  if (found.length <= 1) return found[0]?.item ?? null;
  // A hint is untrusted text (a title, a name): quoted, so it stays one line and cannot restyle a terminal.
  const listed = found.slice(0, SHOWN).map((candidate) => `${shortId(candidate.key)}${candidate.hint ? ` ${quoted(candidate.hint)}` : ''}`);
  throw new AmbiguousIdError(
    `${quoted(text)} is the start of more than one ${kind}: ${listed.join(', ')}${found.length > SHOWN ? ', …' : ''}. Give more of the id.`,
    found.map((candidate) => candidate.key),
  );
}

/** A few words of a title or body that tell one candidate from another, on one line. */
export function oneLineHint(text: string, most = 40): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= most ? flat : `${flat.slice(0, most - 1)}…`;
}

/** Whether `given` is long enough to be taken as the start of an id rather than only as a whole one. */
export function longEnoughToLookUp(given: string): boolean {
  return given.trim().length >= MIN_ID_PREFIX;
}
