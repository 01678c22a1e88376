/** The hub's tokens on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { TokenRecord } from '../../model/records.js';
import type { TokensPort } from '../ports/tokens.js';
import { columnList, selectList, TOKEN_FIELDS, valuesList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';
import { registerNow } from './roster.js';

const TOKEN_COLUMNS = lazy(() => selectList(TOKEN_FIELDS));

export function sqliteTokens(db: SqliteConnection): TokensPort {
  return {
    async createToken(token, register) {
      db.immediate(() => {
        registerNow(db, register, token.createdAt);
        db.run(`INSERT INTO tokens (${columnList(TOKEN_FIELDS)}) VALUES (${valuesList(TOKEN_FIELDS, (field) => `@${field}`)})`, { ...token });
      });
    },

    async tokenById(tokenId) {
      return db.get<TokenRecord>(`SELECT ${TOKEN_COLUMNS()} FROM tokens WHERE token_id = ?`, [tokenId]) ?? null;
    },

    async listTokens() {
      return db.all<TokenRecord>(`SELECT ${TOKEN_COLUMNS()} FROM tokens ORDER BY created_at, token_id`);
    },

    async revokeTokens(idOrAgent, now) {
      return db.immediate(() => {
        const ids = db
          .all<{ tokenId: string }>('SELECT token_id AS "tokenId" FROM tokens WHERE (token_id = @key OR agent = @key) AND revoked_at IS NULL ORDER BY token_id', { key: idOrAgent })
          .map((row) => row.tokenId);
        for (const id of ids) db.run('UPDATE tokens SET revoked_at = @now WHERE token_id = @id', { id, now });
        return ids;
      });
    },

    async noteTokenUse(tokenId, now, unlessSince) {
      db.immediate(() =>
        db.run('UPDATE tokens SET last_used_at = @now WHERE token_id = @tokenId AND (last_used_at IS NULL OR last_used_at < @unlessSince)', { tokenId, now, unlessSince }),
      );
    },
  };
}
