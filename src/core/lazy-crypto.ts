/**
 * node:crypto, loaded on first use. Hooks and `inbox` start a fresh process at
 * every turn; an empty inbox hashes nothing and mints no ids, so it should not
 * pay for initialising the crypto module.
 */
import { createRequire } from 'node:module';

type Crypto = typeof import('node:crypto');

let loaded: Crypto | undefined;

function crypto(): Crypto {
  loaded ??= createRequire(import.meta.url)('node:crypto') as Crypto;
  return loaded;
}

export function randomId(): string {
  return crypto().randomUUID();
}

export function sha256Hex(text: string): string {
  return crypto().createHash('sha256').update(text, 'utf8').digest('hex');
}

export function sha1Bytes(text: string): Buffer {
  return crypto().createHash('sha1').update(text, 'utf8').digest();
}
