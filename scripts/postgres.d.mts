/** Types for scripts/postgres.mjs, the throwaway PostgreSQL the suite and the benchmarks start. */
export interface StartedPostgres {
  /** The admin URL (user postgres, trust authentication, loopback). */
  url: string;
  /** The server's folder: data, socket, log. */
  dir: string;
  /** The folder of initdb, pg_ctl and psql. */
  bin: string;
  port: number;
}
export function postgresBin(): string | null;
export function ensurePostgres(): void;
export function startPostgres(options?: { durable?: boolean }): Promise<StartedPostgres>;
export function stopPostgres(dir: string, bin?: string | null): void;
export function pausePostgres(dir: string, bin?: string | null): void;
export function resumePostgres(dir: string, bin?: string | null): void;
