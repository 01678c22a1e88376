/**
 * The bus: the core's services over one store, composed. Every surface (the CLI, the MCP server,
 * the hooks, the hub, the chat, the dashboard) is handed a Bus and calls its services; each
 * operation runs one store transaction and, once it has committed, appends its audit rows in a
 * single write to the audit sink. The clock and the judge of a session's liveness are injected:
 * the system's in production, a test's own in tests.
 */
import type { Store } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { AuditCheck } from './audit-check.js';
import { Health } from './health.js';
import { HookBus, type HookBusOptions } from './hook-bus.js';
import { Overview } from './overview.js';
import { Receipts } from './receipt-ops.js';
import { Retention } from './retention.js';
import type { BusSettings } from './settings.js';
import { Tasks } from './task-ops.js';
import { Fleet } from './fleet-ops.js';
import { Tokens } from './tokens.js';
import { Integrations } from './integration-ops.js';
import { OutboundDelivery, type Post } from './outbound-delivery.js';

export interface BusOptions extends HookBusOptions {
  /** How an outbound event is posted (null: this process never posts, it only queues). */
  post?: Post | null;
}

/** The whole bus: what a hook calls (HookBus), and every other service beside it. */
export class Bus extends HookBus {
  /** Where a send has got to, and waiting for it to move. */
  readonly receipts: Receipts;
  /** The hub's tokens: made, listed, revoked, and checked at every request. */
  readonly tokens: Tokens;
  /** Webhook senders: set up, listed, rotated, removed, and their deliveries taken. */
  readonly integrations: Integrations;
  /** The outbox's events posted to the integrations out. */
  readonly outbound: OutboundDelivery;
  /** Pruning old read mail, expired notices and ended sessions. */
  readonly retention: Retention;
  /** The audit log against the store: gaps a crash left, and their repair. */
  readonly auditCheck: AuditCheck;
  /** Work handed over, taken once, and closed with a result that comes back. */
  readonly tasks: Tasks;
  /** The dashboard's pages. */
  readonly overview: Overview;
  /** Whether the store answers, where it is, how it stands. */
  readonly health: Health;
  /** The agents the bus started: their requests, slots and exit records. */
  readonly fleet: Fleet;

  constructor(store: Store, audit: AuditSink, settings: BusSettings, options: BusOptions) {
    super(store, audit, settings, options);
    const { clock } = this;
    this.receipts = new Receipts(store);
    this.tokens = new Tokens(store, clock, audit);
    this.outbound = new OutboundDelivery(store, audit, clock, options.post ?? null);
    this.integrations = new Integrations(store, audit, clock, this.mail, this.notices, this.outbound);
    this.retention = new Retention(store, audit, clock, settings);
    this.auditCheck = new AuditCheck(store, audit, clock);
    this.tasks = new Tasks(store, audit, clock, this.mail, settings, () => this.sessions.liveNames());
    this.overview = new Overview(store, clock, () => this.roster.agents(), (reader, messages, via) => this.inbox.recordShown(reader, messages, via));
    this.health = new Health(store, store.location);
    this.fleet = new Fleet(store, audit, clock);
  }
}
