/** Integrations on PostgreSQL. */
import type { IntegrationRecord } from '../../model/records.js';
import type { IntegrationsPort } from '../ports/integrations.js';
import { columnList, INTEGRATION_FIELDS, selectList, valuesList } from '../shared/columns.js';
import type { PostgresPool } from './pool.js';
import { registerWith } from './roster.js';

const COLUMNS = selectList(INTEGRATION_FIELDS);

export function postgresIntegrations(pool: PostgresPool): IntegrationsPort {
  return {
    async addIntegration(integration, register) {
      return pool.transaction([], async (query) => {
        const inserted = await query(
          `INSERT INTO integrations (${columnList(INTEGRATION_FIELDS)}) VALUES (${valuesList(INTEGRATION_FIELDS, (_, index) => `$${index + 1}`)}) ON CONFLICT (name) DO NOTHING`,
          Object.keys(INTEGRATION_FIELDS).map((field) => integration[field as keyof IntegrationRecord]),
        );
        if ((inserted.rowCount ?? 0) === 0) return false;
        await registerWith(query, register, integration.createdAt);
        return true;
      });
    },

    async integration(name) {
      return (await pool.one<IntegrationRecord>(`SELECT ${COLUMNS} FROM integrations WHERE name = $1`, [name])) ?? null;
    },

    async integrations() {
      return pool.read<IntegrationRecord>(`SELECT ${COLUMNS} FROM integrations ORDER BY name`);
    },

    async rotateIntegration(name, secret, previousUntil) {
      return (await pool.writeAlone('UPDATE integrations SET previous_secret = secret, previous_until = $3, secret = $2 WHERE name = $1', [name, secret, previousUntil], false)) > 0;
    },

    async removeIntegration(name) {
      return pool.transaction([], async (query) => {
        await query('DELETE FROM integration_deliveries WHERE integration = $1', [name]);
        await query('DELETE FROM integration_outbox WHERE integration = $1', [name]);
        return ((await query('DELETE FROM integrations WHERE name = $1', [name])).rowCount ?? 0) > 0;
      });
    },

    async takeDelivery(integration, deliveryId, at, forgetBefore) {
      return pool.transaction([], async (query) => {
        await query('DELETE FROM integration_deliveries WHERE integration = $1 AND received_at < $2', [integration, forgetBefore]);
        return ((await query('INSERT INTO integration_deliveries (integration, delivery_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [integration, deliveryId, at])).rowCount ?? 0) > 0;
      }, false);
    },
  };
}
