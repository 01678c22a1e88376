/** What the hub's own endpoints take from a request's JSON body, checked: bad values are a 400. */
import { InvalidInputError } from '../../model/errors.js';

/** Text of at most `max` characters, or nothing (absent, null or empty). */
export function optionalText(value: unknown, field: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > max) throw new InvalidInputError(`${field} must be text of at most ${max} characters`);
  return value;
}

/** The client's session id a request names (which session of a client address's token asks). */
export function sessionKeyArg(value: unknown): string | null {
  return optionalText(value, 'session_key', 200);
}
