/**
 * The API's answers, as the page reads them: the server's own types (only types: nothing of the
 * server is bundled into the page), and the few shapes the API makes itself.
 */
export type { AuditRow } from '../audit/record.js';
export type { MailDay, RosterPage, ThreadCopy, ThreadSend, ThreadSummary } from '../core/overview.js';
export type { MessageStatus } from '../core/receipts.js';
export type { ReceiptState } from '../model/receipts.js';
export type { AgentView as Agent, MessageView as Message } from '../core/views.js';
export type { ListedNotice as Notice } from '../core/notice-ops.js';
export type { ReservationView as Reservation } from '../core/reservation-ops.js';
export type { TaskView as Task } from '../core/task-ops.js';
export type { IntegrationStanding as Integration, OutboxView as OutboxEvent } from '../core/integration-ops.js';
export type { FleetAgent, FleetPage } from '../http/dashboard/fleet-api.js';

/** `/api/me`: who the page speaks as, and where. */
export interface Me {
  name: string;
  place: 'local' | 'hub';
  version: string;
  store: string | null;
  may_clear_notices: boolean;
  /** Whether it may release anyone's reservations (else only its own). */
  may_release_reservations: boolean;
  /** Whether it may spawn and stop agents and read their logs: on the bus's own machine, not the hub. */
  may_spawn: boolean;
  /** On the hub, with a token of the spawn scope: stop and read the logs of the agents runners run. */
  may_control_runners: boolean;
  now: string;
}
