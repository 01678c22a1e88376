/** How a database setting names its engine: a postgres:// or postgresql:// URL is PostgreSQL, anything else a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value.trim());
}
