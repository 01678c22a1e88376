/** The hub's tokens: each stored as a hash of its secret, found by its id. */
import type { Registration, TokenRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

export interface TokensPort {
  /** Store a new token and register its agent (so mail to it is accepted), in one transaction. */
  createToken(token: TokenRecord, register: Registration[]): Promise<void>;
  /** The token with this id, revoked or expired ones too: the caller decides. */
  tokenById(tokenId: string): Promise<TokenRecord | null>;
  /** Every token, oldest first. */
  listTokens(): Promise<TokenRecord[]>;
  /** Revoke the tokens with this id, or speaking for this agent, not yet revoked; the ids revoked. */
  revokeTokens(idOrAgent: string, now: string): Promise<string[]>;
  /** Note a use: last_used_at = now, only when it was last noted before `unlessSince` (a write at most that often). */
  noteTokenUse(tokenId: string, now: string, unlessSince: string): Promise<void>;
}

export const TOKENS_ATTEMPTS = {
  // Run again, the token's id is taken already.
  createToken: 'once',
  tokenById: 'retryable',
  listTokens: 'retryable',
  // Run again, it finds them revoked and names none.
  revokeTokens: 'once',
  noteTokenUse: 'retryable',
} as const satisfies AttemptsOf<TokensPort>;
