/**
 * Errors the bus raises for bad input or an unusable store. Each carries the
 * exit code the CLI maps it to, so every surface reports failures the same way.
 */
export class BusError extends Error {
  readonly exitCode: number;
  /** Bad usage (a wrong flag, argument or value): the CLI follows the message with the usage line. */
  readonly usage: boolean = false;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/**
 * A value given that cannot be used: bad usage, exit code 2 (the CLI follows it with the usage line).
 * A failure at run time (no such agent, a task already taken) is a BusError, exit code 1.
 */
export class BadValueError extends BusError {
  override readonly usage: boolean = true;
  constructor(message: string) {
    super(message, 2);
  }
}

/** A name that breaks one of the naming rules; the message says which. */
export class InvalidNameError extends BadValueError {}

/** Input that is not a name but still unusable: an empty body, a bad limit, a body over the size cap. */
export class InvalidInputError extends BadValueError {}

/** What was asked for is not there (no such task, notice, agent, integration): a failure, exit code 1. */
export class NotFoundError extends BusError {}

/** Text over a size the bus holds (a body, a notice, a result): refused as a failure, exit code 1, nothing stored. */
export class TooLargeError extends BusError {}

/** What was asked for clashes with what is there (a name taken, a label held): a failure, exit code 1. */
export class ConflictError extends BusError {}

/** A send to a name nobody holds. Nothing was written. */
export class UnknownRecipientError extends BusError {
  readonly to: string;
  constructor(to: string, message: string) {
    super(message, 1);
    this.to = to;
  }
}

/** The database was written by a newer, incompatible agent-bus. */
export class SchemaTooNewError extends BusError {
  constructor(message: string) {
    super(message, 3);
  }
}

/** The database file cannot be opened or is not a database. */
export class StoreUnavailableError extends BusError {}

/**
 * Whether an error says the store cannot be used at all. By name, not by class: each CLI
 * bundle (and the PostgreSQL engine's) carries its own copy of these classes.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof Error && (error instanceof StoreUnavailableError || error.name === 'StoreUnavailableError');
}

/**
 * Whether an error is one of the bus's own. Each command is bundled on its own, with its own
 * copy of the error classes, so errors are recognised by shape rather than by `instanceof`.
 */
export function isBusError(error: unknown): error is BusError {
  return error instanceof Error && typeof (error as Partial<BusError>).exitCode === 'number';
}

/** What kind of failure an error is, as the CLI exits for it: carried across the hub so a remote command exits as a local one. */
export interface ErrorKind {
  exit_code: number;
  usage: boolean;
}

/** The kind of one of the bus's errors; null for anything else (a bug, the store out of reach). */
export function errorKind(error: unknown): ErrorKind | null {
  return isBusError(error) ? { exit_code: error.exitCode, usage: error.usage } : null;
}

/** An error of the kind the hub said, with its message; a plain failure when it said none. */
export function errorOfKind(message: string, kind: unknown): BusError {
  const said = kind !== null && typeof kind === 'object' ? (kind as Partial<ErrorKind>) : {};
  if (said.usage === true) return new BadValueError(message);
  const code = typeof said.exit_code === 'number' && Number.isInteger(said.exit_code) && said.exit_code > 0 && said.exit_code < 64 ? said.exit_code : 1;
  return new BusError(message, code);
}
