/** Where a bundle's V8 code cache is kept: imported by the launcher's first file, so it imports nothing. */
export const CODE_CACHE_SUFFIX = '.v8cache';

/** The code cache of the bundle at `path` for this Node.js: `<bundle>.<V8 version>-<arch>.v8cache`. */
export function codeCachePath(path: string): string {
  return `${path}.${process.versions.v8}-${process.arch}${CODE_CACHE_SUFFIX}`;
}
