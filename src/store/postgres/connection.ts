/**
 * Reaching PostgreSQL: the pool one process uses, how long a connect may take
 * (AGENT_BUS_PG_CONNECT_TIMEOUT, seconds), and one clear error naming host
 * and port (never the password) when the server cannot be reached.
 */
import pg from 'pg';
import { StoreUnavailableError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';

export interface PostgresOptions {
  /** How long one connect may take before the operation fails. */
  connectTimeoutMs: number;
  /** Connections the process may hold at once (sends are batched; readers are few). */
  poolMax: number;
}

export interface Endpoint {
  host: string;
  port: string;
  database: string;
  user: string;
}

/** Host, port, database and user of a URL, as libpq would default them. */
export function endpointOf(url: string): Endpoint {
  try {
    const parsed = new URL(url);
    const host = decodeURIComponent(parsed.hostname) || parsed.searchParams.get('host') || 'localhost';
    return {
      host,
      port: parsed.port || parsed.searchParams.get('port') || '5432',
      database: decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || 'postgres',
      user: decodeURIComponent(parsed.username) || 'postgres',
    };
  } catch {
    return { host: '?', port: '?', database: '?', user: '?' };
  }
}

/** The URL as it may be shown: no password. */
export function displayUrl(url: string): string {
  const { host, port, database, user } = endpointOf(url);
  return `postgres://${user}@${host}:${port}/${database}`;
}

/**
 * The URL as the driver reads it. An `sslmode` means what it means to libpq (`require` encrypts,
 * `verify-full` also checks the certificate and the host): the driver is asked for libpq's
 * semantics, rather than its own, which it warns about on every connect.
 */
export function driverUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('sslmode') && !parsed.searchParams.has('uselibpqcompat')) parsed.searchParams.set('uselibpqcompat', 'true');
    return parsed.toString();
  } catch {
    return url;
  }
}

export function connectionConfig(url: string, options: PostgresOptions): pg.ClientConfig {
  return { connectionString: driverUrl(url), connectionTimeoutMillis: options.connectTimeoutMs, keepAlive: true, application_name: 'agent-bus' };
}

/**
 * A client that closes its socket when its login fails. The pool drops such a client without
 * ending it, and when the failure is on our side (the server asks for a password nobody gave)
 * the server is still waiting for an answer: the open socket would keep the process alive.
 *
 * And one that never takes the process down when its connection drops. The pool listens for that
 * only while a client is idle; one checked out (a transaction, a round of search indexing in the
 * background) would throw it as an unhandled 'error' event. Its statement fails on its own, and the
 * pool drops a client that cannot be queried when it comes back.
 */
class ClosingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: (error: Error | null, client?: pg.Client) => void): void;
  override connect(callback?: (error: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
    const close = (): void => void this.end().catch(() => undefined);
    if (callback === undefined) {
      return super.connect().catch((error: unknown) => {
        close();
        throw error;
      });
    }
    super.connect((error: Error | null) => {
      if (error) close();
      callback(error, this);
    });
  }
}

export function createPool(url: string, options: PostgresOptions): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(url, options), max: options.poolMax, idleTimeoutMillis: 10_000, Client: ClosingClient });
  // An idle connection the server dropped: the next query takes a new one.
  pool.on('error', () => undefined);
  return pool;
}

/** The driver's words when the server asks for a password and none was given. */
const NO_PASSWORD = /client password must be a string|password must be a string|no password/i;
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE']);
/** Server answers that mean "no bus here for you": authentication, a missing database, the server starting or stopping. */
const REFUSED_SQLSTATES = new Set(['28P01', '28000', '3D000', '57P01', '57P02', '57P03', '53300']);

/** Whether an error means the server cannot be used at all (rather than a statement that failed). */
export function isUnreachable(error: unknown): boolean {
  const code = String((error as { code?: unknown }).code ?? '');
  const message = error instanceof Error ? error.message : '';
  // TLS that cannot be set up (a server without it, a certificate that does not verify) is a connect that failed too.
  const tls = /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code) || /does not support SSL|SSL routines|certificate/i.test(message);
  return tls || UNREACHABLE_CODES.has(code) || REFUSED_SQLSTATES.has(code) || NO_PASSWORD.test(message) || /timeout expired|Connection terminated|connect ETIMEDOUT|the server closed the connection/i.test(message);
}

/** One line, naming host and port and what went wrong; the password is never part of it. */
export function unreachable(url: string, error: unknown): StoreUnavailableError {
  const { host, port, database, user } = endpointOf(url);
  const code = String((error as { code?: unknown }).code ?? '');
  const raw = error instanceof Error ? error.message : String(error);
  // Reached, but not let in: say so, and what to change.
  if (NO_PASSWORD.test(raw)) {
    return new StoreUnavailableError(`cannot log in to PostgreSQL at ${host}:${port}: it asks user ${quoted(user)} for a password; give it in the URL, in PGPASSWORD or in ~/.pgpass`);
  }
  if (code === '28P01' || code === '28000') return new StoreUnavailableError(`cannot log in to PostgreSQL at ${host}:${port}: ${raw.replace(/\s*\n\s*/g, ' ')}`);
  const reason = /timeout/i.test(raw) ? 'no answer in time (AGENT_BUS_PG_CONNECT_TIMEOUT)' : raw.replace(/\s*\n\s*/g, ' ');
  const what = code === '3D000' ? `database ${quoted(database)} does not exist` : reason;
  return new StoreUnavailableError(`cannot reach PostgreSQL at ${host}:${port}: ${what}`);
}
