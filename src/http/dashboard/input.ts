/**
 * What the dashboard's API reads from a request: a query's whole numbers and a JSON body's text
 * and flags, each refused in one line that names the field, as the CLI refuses an option.
 */
import { InvalidInputError } from '../../model/errors.js';

export type Query = URLSearchParams;
export type Body = Record<string, unknown>;

export function whole(query: Query, key: string, fallback: number, max: number): number {
  const raw = query.get(key);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new InvalidInputError(`${key} must be a whole number, got ${JSON.stringify(raw.slice(0, 40))}`);
  return Math.min(max, Number.parseInt(raw, 10));
}

export function text(body: Body, key: string, required = false): string | null {
  const value = body[key];
  if (value === undefined || value === null || value === '') {
    if (required) throw new InvalidInputError(`${key} is required`);
    return null;
  }
  if (typeof value !== 'string') throw new InvalidInputError(`${key} must be text`);
  return value;
}

export function flag(body: Body, key: string): boolean {
  const value = body[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new InvalidInputError(`${key} must be true or false`);
  return value;
}
