/**
 * node:crypto, loaded on first use. Hooks and `inbox` start a fresh process at
 * every turn; an empty inbox hashes nothing and mints no ids, so it should not
 * pay for initialising the crypto module.
 */
import { createRequire } from 'node:module';

type Crypto = typeof import('node:crypto');

let loaded: Crypto | undefined;

function crypto(): Crypto {
  loaded ??= createRequire(import.meta.filename)('node:crypto') as Crypto;
  return loaded;
}

export function randomId(): string {
  return crypto().randomUUID();
}

let tokens = 0;

/**
 * A token no other holder has at the same time: unique, not secret, and made without
 * node:crypto (whose loading costs a hook as much as its own queries). For the lease
 * on mail being shown and a notification's payload; never for anything a guess could abuse.
 */
export function uniqueToken(): string {
  tokens++;
  return `${process.pid.toString(36)}.${Date.now().toString(36)}.${tokens.toString(36)}.${Math.random().toString(36).slice(2, 12)}`;
}

const idBytes = Buffer.alloc(16);
// Random bytes drawn in bulk: one draw per id costs more than the rest of a send.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;
let lastMillis = 0;
let sequence = 0;

/**
 * A UUID version 7 (RFC 9562): milliseconds since the epoch, a counter for ids
 * made in the same millisecond, then random bits. New message ids land at the
 * end of the primary-key index instead of on a random page, which roughly
 * halves what each commit writes; within one process they also sort in the
 * order they were made.
 */
export function timeOrderedId(): string {
  let millis = Date.now();
  if (millis <= lastMillis) {
    millis = lastMillis;
    sequence++;
    if (sequence > 0xfff) {
      millis = ++lastMillis;
      sequence = 0;
    }
  } else {
    sequence = 0;
  }
  lastMillis = millis;
  if (poolOffset + 10 > pool.length) {
    crypto().randomFillSync(pool);
    poolOffset = 0;
  }
  pool.copy(idBytes, 6, poolOffset, poolOffset + 10);
  poolOffset += 10;
  idBytes.writeUIntBE(millis, 0, 6);
  idBytes[6] = 0x70 | (sequence >> 8);
  idBytes[7] = sequence & 0xff;
  idBytes[8] = ((idBytes[8] as number) & 0x3f) | 0x80;
  const hex = idBytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Node's one-shot hash where it has one (20.12 and later): half the cost of a Hash object for short texts. */
let oneShot: ((algorithm: string, data: string) => string) | null | undefined;

export function sha256Hex(text: string): string {
  if (oneShot === undefined) {
    const hash = (crypto() as { hash?: (algorithm: string, data: string) => string }).hash;
    oneShot = typeof hash === 'function' ? hash : null;
  }
  return oneShot !== null ? oneShot('sha256', text) : crypto().createHash('sha256').update(text, 'utf8').digest('hex');
}

export function sha1Bytes(text: string): Buffer {
  return crypto().createHash('sha1').update(text, 'utf8').digest();
}

/** HMAC-SHA256 of `data` (raw bytes, or text as UTF-8) under `key`, hex. */
export function hmacSha256Hex(key: string, data: Buffer | string): string {
  return crypto().createHmac('sha256', key).update(data).digest('hex');
}

export function randomBytes(size: number): Buffer {
  return crypto().randomBytes(size);
}

/** Whether two byte strings are equal, in time that does not depend on where they differ. */
export function equalInConstantTime(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto().timingSafeEqual(a, b);
}
