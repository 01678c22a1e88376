/**
 * Whether an operation may run again when a call's outcome is unknown (its connection dropped as it
 * committed, a hub's request timed out): every port says it of each of its methods, in a map keyed by
 * them, so a method added without saying is a type error.
 *
 * - `retryable`: running it twice leaves the store as running it once did, and the second answer is as
 *   true as the first (a read, a write that sets a state, a release of what may already be released).
 * - `once`: a second run would do or answer something else (a send writes its mail again, a counter
 *   counts twice, a compare-and-set or a removal answers that it found nothing to do).
 */
export type Attempts = 'once' | 'retryable';

/** A port's statement of attempts: every method of `Port`, and nothing else, said once or retryable. */
export type AttemptsOf<Port> = { readonly [Method in keyof Port]-?: Attempts };
