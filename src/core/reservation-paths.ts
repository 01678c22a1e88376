/**
 * What a reservation names, and when two of them can name one file.
 *
 * A reservation holds files or globs inside one repo: paths relative to its root, POSIX-style. A
 * reserved path covers itself and whatever lies below it (a directory reserved by name holds its
 * files). Matching a file against a pattern is picomatch's; whether two patterns can both match one
 * file is decided here, segment by segment, and conservatively: when it cannot be shown that no file
 * matches both, they overlap.
 */
import { createRequire } from 'node:module';
import type Picomatch from 'picomatch';
import type Braces from 'braces';
import { InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import { anchoredAbove, GLOB_CHARS, patternAnchor } from '../model/reservation-anchor.js';

export interface MatchOptions {
  /** Fold case, as the file systems of macOS and Windows do. */
  nocase?: boolean;
}

// Loaded on first use, from node_modules: every hook builds a Bus, and only a write of a reserved
// file needs a matcher, so the hooks' bundles carry neither library (their start-up is the product).
const load = createRequire(import.meta.filename);
let picomatchLib: typeof Picomatch | undefined;
let bracesLib: typeof Braces | undefined;
const picomatch = (): typeof Picomatch => (picomatchLib ??= load('picomatch') as typeof Picomatch);
const braces = (): typeof Braces => (bracesLib ??= load('braces') as typeof Braces);

/** Whether this file system folds case, so `Src/A.ts` and `src/a.ts` are one file. */
export const FOLDS_CASE = process.platform === 'darwin' || process.platform === 'win32';

/** Past this many brace alternatives a pattern is not expanded, and overlaps whatever it might. */
const MAX_ALTERNATIVES = 256;

/** A reservation's path as stored: relative to the repo root, POSIX, no `.` or empty segments; `dir/` becomes `dir/**`. */
export function reservationPath(raw: string, repoRoot: string): string {
  if (raw.includes('\0')) throw new InvalidInputError('a reserved path may not hold a NUL byte');
  // Paths are shown a line each (hooks' answers, the commit guard at a terminal).
  if (/\p{Cc}/u.test(raw)) throw new InvalidInputError('a reserved path may not hold a line break or another control character');
  let path = raw.trim();
  if (path === '') throw new InvalidInputError('a reserved path may not be empty');
  if (path.startsWith('!')) throw new InvalidInputError(`${quoted(raw)} is a negated glob: a reservation names what it holds`);
  const root = repoRoot.replace(/\/+$/, '');
  if (path.startsWith('/')) {
    if (path !== root && !path.startsWith(`${root}/`)) throw new InvalidInputError(`${quoted(raw)} is outside the repo ${quoted(root)}: reserve paths inside it`);
    path = path.slice(root.length + 1);
  }
  const directory = path.endsWith('/');
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new InvalidInputError(`${quoted(raw)} leaves the repo through '..': reserve paths inside it`);
  if (segments.length === 0) throw new InvalidInputError(`${quoted(raw)} is the whole repo: reserve files or globs inside it ('**' holds everything)`);
  if (directory && segments[segments.length - 1] !== '**') segments.push('**');
  return segments.join('/');
}

/** Whether a file (a repo-relative path) falls under a reserved pattern: it matches, or lies below what matches. */
export function coversFile(pattern: string, file: string, options: MatchOptions = {}): boolean {
  const nocase = options.nocase ?? FOLDS_CASE;
  const held = nocase ? pattern.toLowerCase() : pattern;
  const written = nocase ? file.toLowerCase() : file;
  // The pre-tool hook asks this of every reservation that may cover a written file: the literal folders
  // a pattern starts with rule most of them out without compiling a matcher (or loading picomatch at all).
  if (!anchoredAbove(patternAnchor(held), written)) return false;
  // A literal pattern is its own anchor: the file is it, or lies below it.
  if (!GLOB_CHARS.test(held)) return true;
  const matchOptions = { dot: true, nocase };
  return picomatch().isMatch(file, pattern, matchOptions) || picomatch().isMatch(file, `${pattern}/**`, matchOptions);
}

/** Whether some file could fall under both patterns. Errs towards yes. */
export function patternsOverlap(a: string, b: string, options: MatchOptions = {}): boolean {
  const nocase = options.nocase ?? FOLDS_CASE;
  const left = alternatives(a);
  const right = alternatives(b);
  if (left === null || right === null) return true;
  return left.some((one) => right.some((other) => sequencesOverlap(segmentsOf(one), segmentsOf(other), nocase)));
}

/** The brace alternatives of a pattern, or null when there are too many to weigh. */
function alternatives(pattern: string): string[] | null {
  if (!pattern.includes('{')) return [pattern];
  try {
    const expanded = braces()(pattern, { expand: true, rangeLimit: MAX_ALTERNATIVES });
    return expanded.length > 0 && expanded.length <= MAX_ALTERNATIVES ? expanded : null;
  } catch {
    return null;
  }
}

/** A pattern's segments, ending in `**`: what a reserved path covers goes on below it. */
function segmentsOf(pattern: string): string[] {
  const segments = pattern.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments[segments.length - 1] !== '**') segments.push('**');
  return segments;
}

function sequencesOverlap(a: string[], b: string[], nocase: boolean): boolean {
  const seen = new Map<string, boolean>();
  const walk = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = seen.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === a.length || j === b.length) {
      // One side is used up: the other may go on only with segments that can match nothing more.
      result = a.slice(i).every((segment) => segment === '**') && b.slice(j).every((segment) => segment === '**');
    } else if (a[i] === '**') {
      result = walk(i + 1, j) || walk(i, j + 1);
    } else if (b[j] === '**') {
      result = walk(i, j + 1) || walk(i + 1, j);
    } else {
      result = segmentsOverlap(a[i] as string, b[j] as string, nocase) && walk(i + 1, j + 1);
    }
    seen.set(key, result);
    return result;
  };
  return walk(0, 0);
}

/** Whether one path segment could match both: exactly for a literal, conservatively for two globs. */
function segmentsOverlap(a: string, b: string, nocase: boolean): boolean {
  const aGlob = GLOB_CHARS.test(a);
  const bGlob = GLOB_CHARS.test(b);
  if (!aGlob && !bGlob) return nocase ? a.toLowerCase() === b.toLowerCase() : a === b;
  if (!aGlob) return picomatch().isMatch(a, b, { dot: true, nocase });
  if (!bGlob) return picomatch().isMatch(b, a, { dot: true, nocase });
  // Two globs: apart only when their fixed starts or fixed ends disagree (`*.ts` and `*.md`).
  const fold = (text: string): string => (nocase ? text.toLowerCase() : text);
  const [aStart, aEnd] = fixedEnds(fold(a));
  const [bStart, bEnd] = fixedEnds(fold(b));
  const startsAgree = aStart.startsWith(bStart) || bStart.startsWith(aStart);
  const endsAgree = aEnd.endsWith(bEnd) || bEnd.endsWith(aEnd);
  return startsAgree && endsAgree;
}

/** The literal text before a segment's first glob character and after its last. */
function fixedEnds(segment: string): [string, string] {
  const first = segment.search(GLOB_CHARS);
  let last = -1;
  for (let index = segment.length - 1; index >= 0; index -= 1) {
    if (GLOB_CHARS.test(segment[index] as string)) {
      last = index;
      break;
    }
  }
  return [segment.slice(0, first), segment.slice(last + 1)];
}
