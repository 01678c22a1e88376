/** The hub's tokens on PostgreSQL. */
import type { TokenRecord } from '../../model/records.js';
import type { TokensPort } from '../ports/tokens.js';
import { columnList, selectList, TOKEN_FIELDS, valuesList } from '../shared/columns.js';
import type { PostgresPool } from './pool.js';
import { registerWith } from './roster.js';

const TOKEN_COLUMNS = selectList(TOKEN_FIELDS);

export function postgresTokens(pool: PostgresPool): TokensPort {
  return {
    async createToken(token, register) {
      await pool.transaction([], async (query) => {
        await registerWith(query, register, token.createdAt);
        await query(
          `INSERT INTO tokens (${columnList(TOKEN_FIELDS)}) VALUES (${valuesList(TOKEN_FIELDS, (_, index) => `$${index + 1}`)})`,
          Object.keys(TOKEN_FIELDS).map((field) => token[field as keyof TokenRecord]),
        );
      });
    },

    async tokenById(tokenId) {
      return (await pool.one<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE token_id = $1`, [tokenId])) ?? null;
    },

    async listTokens() {
      return pool.read<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at, token_id`);
    },

    async revokeTokens(idOrAgent, now) {
      const rows = await pool.read<{ tokenId: string }>(
        `WITH revoked AS (
           UPDATE tokens SET revoked_at = $2 WHERE (token_id = $1 OR agent = $1) AND revoked_at IS NULL RETURNING token_id
         ) SELECT token_id AS "tokenId" FROM revoked ORDER BY token_id`,
        [idOrAgent, now],
      );
      return rows.map((row) => row.tokenId);
    },

    async noteTokenUse(tokenId, now, unlessSince) {
      await pool.writeAlone('UPDATE tokens SET last_used_at = $2 WHERE token_id = $1 AND (last_used_at IS NULL OR last_used_at < $3)', [tokenId, now, unlessSince], false);
    },
  };
}
