/** Integrations: webhook senders, their secrets (the store is private to the user), and the deliveries each has taken. */
import type { IntegrationRecord, Registration } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

export interface IntegrationsPort {
  /** Store a new integration and put its name on the roster, in one transaction; false when the name is taken. */
  addIntegration(integration: IntegrationRecord, register: Registration[]): Promise<boolean>;
  integration(name: string): Promise<IntegrationRecord | null>;
  /** Every integration, by name. */
  integrations(): Promise<IntegrationRecord[]>;
  /** A new secret; the current one stays valid until `previousUntil`. False when there is no such integration. */
  rotateIntegration(name: string, secret: string, previousUntil: string): Promise<boolean>;
  /** Remove it, the deliveries it took and the events queued for it; false when there was none. */
  removeIntegration(name: string): Promise<boolean>;
  /**
   * Note a delivery id as taken: true the first time, false when it was taken already (a replay).
   * The integration's ids taken before `forgetBefore` are forgotten (no sender replays that late).
   */
  takeDelivery(integration: string, deliveryId: string, at: string, forgetBefore: string): Promise<boolean>;
}

export const INTEGRATIONS_ATTEMPTS = {
  // Run again, it finds the name taken.
  addIntegration: 'once',
  integration: 'retryable',
  integrations: 'retryable',
  // Run again, the first secret made would be lost.
  rotateIntegration: 'once',
  removeIntegration: 'once',
  // Run again, it finds the delivery taken and says it is a replay.
  takeDelivery: 'once',
} as const satisfies AttemptsOf<IntegrationsPort>;
