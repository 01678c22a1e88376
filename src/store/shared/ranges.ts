/**
 * Prefixes as ranges of keys, so an index answers them whatever the prefix holds (a LIKE would need
 * its wildcards escaped, and is not always answered from an index).
 */

/** The least text after every text that begins with `prefix`. */
export function prefixEnd(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/** The names that begin `repo/`: from `repo/` up to `repo0` ('0' follows '/'). */
export function namesUnder(repo: string): { from: string; to: string } {
  return { from: `${repo}/`, to: `${repo}0` };
}
