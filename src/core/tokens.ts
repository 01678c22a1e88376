/**
 * The hub's tokens: an agent's identity over the network. A token is
 * `abt_<id>_<secret>`: the id finds its row, the secret (256 random bits) is
 * stored only as a sha256 hash and compared in constant time. A token is shown
 * once, when it is made; nothing else ever prints, stores or audits it.
 */
import type { AuditSink } from './audit-sink.js';
import { tokenRow } from '../audit/record.js';
import { formatStamp, stampToMillis, type Clock } from '../model/clock.js';
import { InvalidInputError } from '../model/errors.js';
import { equalInConstantTime, randomBytes, sha256Hex } from '../model/ids.js';
import type { TokenRecord } from '../model/records.js';
import type { IntegrationsPort, TokensPort } from '../store/ports.js';
import { parseSpeaker } from './names.js';
import { registrationsFor } from './roster.js';
import { quoted } from '../model/quote.js';

const TOKEN_PATTERN = /^abt_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const ID_PATTERN = /^[0-9a-f]{16}$/;
/** What a token may be given beyond speaking as its agent: reading the hub's metrics; starting and stopping agents on any machine (and running a runner). */
export const TOKEN_SCOPES = ['metrics', 'spawn'] as const;
/** A token's use is written down at most this often, so a busy agent does not write at every request. */
const USE_NOTED_EVERY_MS = 60_000;

export type TokenCheck =
  | { ok: true; token: TokenRecord }
  | { ok: false; reason: 'malformed' | 'unknown' | 'expired' | 'revoked' };

export interface NewToken {
  record: TokenRecord;
  /** The token itself: shown to the user once, and never again. */
  token: string;
}

export function parseScopes(raw: readonly string[]): string {
  const scopes = raw.flatMap((item) => item.split(/[\s,]+/)).filter((item) => item !== '');
  for (const scope of scopes) {
    if (!(TOKEN_SCOPES as readonly string[]).includes(scope)) throw new InvalidInputError(`unknown scope ${quoted(scope)}: the scopes are ${TOKEN_SCOPES.join(', ')}`);
  }
  return [...new Set(scopes)].sort().join(' ');
}

export function hasScope(token: TokenRecord, scope: (typeof TOKEN_SCOPES)[number]): boolean {
  return token.scopes.split(' ').includes(scope);
}

/** The id a presented token names, if it is shaped like one (nothing is checked). */
export function presentedTokenId(presented: string): string | null {
  return TOKEN_PATTERN.exec(presented)?.[1] ?? null;
}

/** Whether a string is shaped like a token id (what `token revoke` tells from an agent name). */
export function isTokenId(text: string): boolean {
  return ID_PATTERN.test(text);
}

export class Tokens {
  constructor(
    private readonly store: TokensPort & Pick<IntegrationsPort, 'integration'>,
    private readonly clock: Clock,
    private readonly audit: AuditSink | null = null,
  ) {}

  /** The clock's time in milliseconds. */
  private now(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }

  async create(request: { agent: string; repoPath: string | null; expiresInMs: number | null; scopes: string; actor?: string }): Promise<NewToken> {
    parseSpeaker(request.agent);
    // An integration speaks only through its signed deliveries, never as a token's agent.
    if ((await this.store.integration(request.agent)) !== null) throw new InvalidInputError(`${quoted(request.agent)} is an integration: it sends only through its signed deliveries, and takes no token`);
    const tokenId = randomBytes(8).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const now = this.now();
    const record: TokenRecord = {
      tokenId,
      agent: request.agent,
      // A remote agent works in a folder of another machine: its name's repo stands in for a path here.
      repoPath: request.repoPath ?? request.agent.split('/')[0] ?? request.agent,
      secretHash: sha256Hex(secret),
      scopes: request.scopes,
      createdAt: formatStamp(now * 1000),
      expiresAt: request.expiresInMs === null ? null : formatStamp((now + request.expiresInMs) * 1000),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.store.createToken(record, registrationsFor(record.agent, record.repoPath, true));
    this.audit?.append([
      tokenRow(record.createdAt, request.actor ?? 'operator', 'create', tokenId, record.agent, `${tokenId} speaks for ${quoted(record.agent)}${record.expiresAt === null ? '' : ' until it expires'}`, record.expiresAt),
    ]);
    return { record, token: `abt_${tokenId}_${secret}` };
  }

  list(): Promise<TokenRecord[]> {
    return this.store.listTokens();
  }

  async revoke(idOrAgent: string, actor = 'operator'): Promise<string[]> {
    const now = formatStamp(this.now() * 1000);
    const revoked = await this.store.revokeTokens(idOrAgent, now);
    if (revoked.length > 0) {
      const agents = new Map((await this.store.listTokens()).map((token) => [token.tokenId, token.agent]));
      this.audit?.append(revoked.map((tokenId) => tokenRow(now, actor, 'revoke', tokenId, agents.get(tokenId) ?? idOrAgent, `${tokenId} is refused from now on`)));
    }
    return revoked;
  }

  /** Who a presented token speaks for, read from the store at every call: a revoke counts at the next request, on every hub. */
  async check(presented: string): Promise<TokenCheck> {
    const match = TOKEN_PATTERN.exec(presented);
    if (!match) return { ok: false, reason: 'malformed' };
    const [, tokenId, secret] = match as unknown as [string, string, string];
    const token = await this.store.tokenById(tokenId);
    const given = Buffer.from(sha256Hex(secret), 'hex');
    // Compared even for an unknown id, against a stand-in, so timing tells nothing about which ids exist.
    const stored = Buffer.from(token?.secretHash ?? '0'.repeat(64), 'hex');
    if (!equalInConstantTime(given, stored) || token === null) return { ok: false, reason: 'unknown' };
    if (token.revokedAt !== null) return { ok: false, reason: 'revoked' };
    const now = this.now();
    if (token.expiresAt !== null && stampToMillis(token.expiresAt) <= now) return { ok: false, reason: 'expired' };
    if (token.lastUsedAt === null || now - stampToMillis(token.lastUsedAt) >= USE_NOTED_EVERY_MS) {
      await this.store.noteTokenUse(token.tokenId, formatStamp(now * 1000), formatStamp((now - USE_NOTED_EVERY_MS) * 1000));
    }
    return { ok: true, token };
  }
}
