/**
 * A value made on first use and kept: for SQL text a module would otherwise build as it loads, which
 * every process pays at start, though most use a few of a store's statements (a hook, a handful).
 */
export function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}
