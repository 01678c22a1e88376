/**
 * A reserved pattern's anchor: the literal folders it starts with, which every file it covers lies
 * in. The core rules reservations out by it before compiling a matcher, and the stores index it, so
 * the reservations that may cover a file are found among those anchored at the file or above it.
 */

/** The characters that make a path segment a glob (picomatch's, extglobs and escapes included). */
export const GLOB_CHARS = /[*?[\]{}()!+@\\]/;

/**
 * The pattern's whole folders before its first glob character (`src/app/*.ts`: `src/app`; `**\/x`:
 * the empty anchor, the repo's root), or the whole pattern when it holds no glob: a reserved path
 * covers itself and what lies below it.
 */
export function patternAnchor(pattern: string): string {
  const firstGlob = pattern.search(GLOB_CHARS);
  if (firstGlob < 0) return pattern;
  return pattern.slice(0, Math.max(0, pattern.lastIndexOf('/', firstGlob)));
}

/** The anchors a pattern covering `file` may have: the root, each folder above the file, and the file itself. */
export function anchorsAbove(file: string): string[] {
  const anchors = [''];
  for (let slash = file.indexOf('/'); slash >= 0; slash = file.indexOf('/', slash + 1)) anchors.push(file.slice(0, slash));
  anchors.push(file);
  return anchors;
}

/** Whether a pattern anchored at `anchor` may cover `file`: the anchor is the root, the file, or a folder above it. */
export function anchoredAbove(anchor: string, file: string): boolean {
  return anchor === '' || file === anchor || file.startsWith(`${anchor}/`);
}
