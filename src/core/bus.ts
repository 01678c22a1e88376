/**
 * The bus: the core's services over one store, composed. Every surface (the CLI, the MCP server,
 * the hooks, the hub, the chat, the dashboard) is handed a Bus and calls its services; each
 * operation runs one store transaction and, once it has committed, appends its audit rows in a
 * single write to the audit sink. The clock and the judge of a session's liveness are injected:
 * the system's in production, a test's own in tests.
 */
import { Reservations } from './reservation-ops.js';
import { systemClock, type Clock } from '../model/clock.js';
import type { ChangeFeed, Store } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { AuditCheck } from './audit-check.js';
import { BrainRecords } from './brain-ops.js';
import { Health } from './health.js';
import { Inbox } from './inbox-ops.js';
import type { SessionLiveness } from './liveness.js';
import { Mail, type AfterSend } from './mail-ops.js';
import { Notices } from './notice-ops.js';
import { Overview } from './overview.js';
import { Receipts } from './receipt-ops.js';
import { Retention } from './retention.js';
import { Roster } from './roster-ops.js';
import { Sessions } from './session-ops.js';
import type { BusSettings } from './settings.js';
import { Tasks } from './task-ops.js';
import { Presence } from './presence-ops.js';
import { Tokens } from './tokens.js';
import { Integrations } from './integration-ops.js';
import { OutboundDelivery, type Post } from './outbound-delivery.js';
import { Wakes } from './wake-ops.js';

export interface BusOptions {
  /**
   * Judges whether a session's server still runs (from the process table, in production); made on
   * first use, since most operations never ask.
   */
  liveness: () => SessionLiveness;
  /** Where the core reads the time: the system clock unless a test moves one by hand. */
  clock?: Clock;
  /** What a committed send sets off (waking its recipients); it never fails the send. */
  afterSend?: AfterSend | null;
  /** How an outbound event is posted (null: this process never posts, it only queues). */
  post?: Post | null;
}

export class Bus {
  readonly clock: Clock;
  /** Sending, threads, the newest mail, search, following the sends. */
  readonly mail: Mail;
  /** A reader's mail: read, peeked, and delivered in two halves. */
  readonly inbox: Inbox;
  /** Where a send has got to, and waiting for it to move. */
  readonly receipts: Receipts;
  /** Who is on the bus; forgetting, retiring, topics, `whoami`. */
  readonly roster: Roster;
  /** Session addresses: taken, ended, renamed, running; which session a hook speaks for. */
  readonly sessions: Sessions;
  /** Broadcast notices: publish, list, acknowledge, clear, deliver. */
  readonly notices: Notices;
  /** The hub's tokens: made, listed, revoked, and checked at every request. */
  readonly tokens: Tokens;
  /** Webhook senders: set up, listed, rotated, removed, and their deliveries taken. */
  readonly integrations: Integrations;
  /** The outbox's events posted to the integrations out. */
  readonly outbound: OutboundDelivery;
  /** What the wake paths need: the rate limit, watchers, routes. */
  readonly wakes: Wakes;
  /** The brain adapter's records: its state, markers, tool-call counts. */
  readonly brain: BrainRecords;
  /** Pruning old read mail, expired notices and ended sessions. */
  readonly retention: Retention;
  /** The audit log against the store: gaps a crash left, and their repair. */
  readonly auditCheck: AuditCheck;
  /** File reservations, the writes they meet, and collisions. */
  readonly reservations: Reservations;
  /** Work handed over, taken once, and closed with a result that comes back. */
  readonly tasks: Tasks;
  /** Where each agent's turn stands, as its hooks note it, and callers told when one gets somewhere. */
  readonly presence: Presence;
  /** The dashboard's pages. */
  readonly overview: Overview;
  /** Whether the store answers, where it is, how it stands. */
  readonly health: Health;

  constructor(
    private readonly store: Store,
    private readonly audit: AuditSink,
    readonly settings: BusSettings,
    options: BusOptions,
  ) {
    const clock = options.clock ?? systemClock;
    this.clock = clock;
    this.sessions = new Sessions(store, audit, clock, settings, options.liveness);
    const isRunning = this.sessions.isRunning.bind(this.sessions);
    this.roster = new Roster(store, audit, clock, isRunning, this.sessions.clientRunsOn.bind(this.sessions));
    this.mail = new Mail(store, audit, clock, settings, options.afterSend ?? null, (clientAddress) => this.sessions.liveNames(clientAddress));
    this.inbox = new Inbox(store, audit, clock);
    this.receipts = new Receipts(store);
    this.notices = new Notices(store, audit, clock, settings.channelMaxNotices);
    this.tokens = new Tokens(store, clock, audit);
    this.outbound = new OutboundDelivery(store, audit, clock, options.post ?? null);
    this.integrations = new Integrations(store, audit, clock, this.mail, this.notices, this.outbound);
    this.wakes = new Wakes(store, audit, clock);
    this.brain = new BrainRecords(store, clock);
    this.retention = new Retention(store, audit, clock, settings);
    this.auditCheck = new AuditCheck(store, audit, clock);
    this.reservations = new Reservations(store, audit, clock, settings, () => this.sessions.liveNames());
    this.tasks = new Tasks(store, audit, clock, this.mail, settings, () => this.sessions.liveNames());
    this.presence = new Presence(store, clock, this.roster, this.mail);
    this.overview = new Overview(store, clock, () => this.roster.agents(), (reader, messages, via) => this.inbox.recordShown(reader, messages, via));
    this.health = new Health(store, store.location);
  }

  /** A feed of the store's changes, for a loop that waits for mail. */
  changes(): ChangeFeed {
    return this.store.changes();
  }

  async close(): Promise<void> {
    this.audit.close();
    await this.store.close();
  }
}
