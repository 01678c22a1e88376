/**
 * The signatures of webhook deliveries, checked over the exact bytes received and compared in
 * constant time. GitHub signs the raw body alone (`X-Hub-Signature-256: sha256=HEX`), so a captured
 * delivery replays cleanly and is deduplicated by its delivery id instead. agent-bus's own scheme,
 * for any other sender and for what the bus posts out, signs the timestamp too
 * (`X-Agent-Bus-Signature: sha256=HEX` over `TIMESTAMP.BODY`, `X-Agent-Bus-Timestamp` in Unix
 * seconds), and a delivery outside the window is refused. Several secrets may be valid at once (a
 * rotated-out one during its grace): any of them verifies.
 */
import { equalInConstantTime, hmacSha256Hex, randomBytes } from '../model/ids.js';

/** How far a generic delivery's timestamp may be from the receiver's clock. */
export const SIGNATURE_WINDOW_SECONDS = 5 * 60;

/** The headers, lower-cased as Node.js gives them. */
export const SIGNATURE_HEADERS = {
  github: 'x-hub-signature-256',
  githubEvent: 'x-github-event',
  githubDelivery: 'x-github-delivery',
  signature: 'x-agent-bus-signature',
  timestamp: 'x-agent-bus-timestamp',
  delivery: 'x-agent-bus-delivery',
} as const;

/** A new integration secret: 32 random bytes, URL-safe. */
export function newIntegrationSecret(): string {
  return `abwh_${randomBytes(32).toString('base64url')}`;
}

/** The `sha256=HEX` value that signs `body` sent at `timestamp` (Unix seconds) under agent-bus's scheme. */
export function signDelivery(secret: string, timestamp: number, body: Buffer | string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return `sha256=${hmacSha256Hex(secret, Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), bytes]))}`;
}

/** Whether a `sha256=HEX` header value is the HMAC of `data` under one of `secrets`. */
function signedByOneOf(header: string | undefined, secrets: readonly string[], data: Buffer): boolean {
  const match = /^sha256=([0-9a-f]{64})$/i.exec((header ?? '').trim());
  if (!match) return false;
  const given = Buffer.from((match[1] as string).toLowerCase(), 'hex');
  // Every secret is tried, so the time taken says nothing of which matched.
  let found = false;
  for (const secret of secrets) if (equalInConstantTime(Buffer.from(hmacSha256Hex(secret, data), 'hex'), given)) found = true;
  return found;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/** A GitHub delivery: `X-Hub-Signature-256` over the raw body. */
export function verifyGithub(signature: string | undefined, body: Buffer, secrets: readonly string[]): Verdict {
  if (signature === undefined || signature === '') return { ok: false, reason: 'no X-Hub-Signature-256 header' };
  return signedByOneOf(signature, secrets, body) ? { ok: true } : { ok: false, reason: 'the X-Hub-Signature-256 signature does not match' };
}

/** A delivery signed with agent-bus's scheme, at `nowSeconds` on the receiver's clock. */
export function verifyGeneric(headers: { signature: string | undefined; timestamp: string | undefined }, body: Buffer, secrets: readonly string[], nowSeconds: number): Verdict {
  if (headers.signature === undefined || headers.signature === '') return { ok: false, reason: 'no X-Agent-Bus-Signature header' };
  const stamp = (headers.timestamp ?? '').trim();
  if (!/^\d{1,12}$/.test(stamp)) return { ok: false, reason: 'X-Agent-Bus-Timestamp must be the Unix time in seconds' };
  const timestamp = Number(stamp);
  if (Math.abs(nowSeconds - timestamp) > SIGNATURE_WINDOW_SECONDS) return { ok: false, reason: `X-Agent-Bus-Timestamp is more than ${SIGNATURE_WINDOW_SECONDS / 60} minutes from the receiver's clock` };
  const signed = Buffer.concat([Buffer.from(`${stamp}.`, 'utf8'), body]);
  return signedByOneOf(headers.signature, secrets, signed) ? { ok: true } : { ok: false, reason: 'the X-Agent-Bus-Signature signature does not match' };
}
