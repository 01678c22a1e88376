/** Integrations on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { IntegrationRecord } from '../../model/records.js';
import type { IntegrationsPort } from '../ports/integrations.js';
import { columnList, INTEGRATION_FIELDS, selectList, valuesList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';
import { registerNow } from './roster.js';

const COLUMNS = lazy(() => selectList(INTEGRATION_FIELDS));

export function sqliteIntegrations(db: SqliteConnection): IntegrationsPort {
  return {
    async addIntegration(integration, register) {
      return db.immediate(() => {
        if (db.get('SELECT 1 FROM integrations WHERE name = ?', [integration.name]) !== undefined) return false;
        registerNow(db, register, integration.createdAt);
        db.run(`INSERT INTO integrations (${columnList(INTEGRATION_FIELDS)}) VALUES (${valuesList(INTEGRATION_FIELDS, (field) => `@${field}`)})`, { ...integration });
        return true;
      });
    },

    async integration(name) {
      return db.get<IntegrationRecord>(`SELECT ${COLUMNS()} FROM integrations WHERE name = ?`, [name]) ?? null;
    },

    async integrations() {
      return db.all<IntegrationRecord>(`SELECT ${COLUMNS()} FROM integrations ORDER BY name`);
    },

    async rotateIntegration(name, secret, previousUntil) {
      return db.immediate(
        () => db.run('UPDATE integrations SET previous_secret = secret, previous_until = @previousUntil, secret = @secret WHERE name = @name', { name, secret, previousUntil }).changes > 0,
      );
    },

    async removeIntegration(name) {
      return db.immediate(() => {
        db.run('DELETE FROM integration_deliveries WHERE integration = ?', [name]);
        db.run('DELETE FROM integration_outbox WHERE integration = ?', [name]);
        return db.run('DELETE FROM integrations WHERE name = ?', [name]).changes > 0;
      });
    },

    async takeDelivery(integration, deliveryId, at, forgetBefore) {
      return db.immediate(() => {
        db.run('DELETE FROM integration_deliveries WHERE integration = ? AND received_at < ?', [integration, forgetBefore]);
        return db.run('INSERT OR IGNORE INTO integration_deliveries (integration, delivery_id, received_at) VALUES (?, ?, ?)', [integration, deliveryId, at]).changes > 0;
      });
    },
  };
}
