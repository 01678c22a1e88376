/**
 * What a hook calls of the bus: mail and the inbox, the roster and sessions, notices and the
 * brain's records, the wake routes, reservations, presence, and the reminder of held tasks. The
 * Bus (core/bus.ts) adds the rest (tasks, integrations and the outbox, tokens, retention, the
 * dashboard's pages…) on top; a hook's own process composes this alone, so its bundle carries none
 * of that code, which it would read and set up at every start and never call.
 */
import { Reservations } from './reservation-ops.js';
import { systemClock, type Clock } from '../model/clock.js';
import type { ChangeFeed, Store } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { BrainRecords } from './brain-ops.js';
import { Inbox } from './inbox-ops.js';
import type { SessionLiveness } from './liveness.js';
import { Mail, type AfterSend } from './mail-ops.js';
import { Notices } from './notice-ops.js';
import { Roster } from './roster-ops.js';
import { Sessions } from './session-ops.js';
import type { BusSettings } from './settings.js';
import { Presence } from './presence-ops.js';
import { TaskReminders } from './task-reminders.js';
import { Wakes } from './wake-ops.js';

export interface HookBusOptions {
  /**
   * Judges whether a session's server still runs (from the process table, in production); made on
   * first use, since most operations never ask.
   */
  liveness: () => SessionLiveness;
  /** Where the core reads the time: the system clock unless a test moves one by hand. */
  clock?: Clock;
  /** What a committed send sets off (waking its recipients); it never fails the send. */
  afterSend?: AfterSend | null;
}

export class HookBus {
  readonly clock: Clock;
  /** Sending, threads, the newest mail, search, following the sends. */
  readonly mail: Mail;
  /** A reader's mail: read, peeked, and delivered in two halves. */
  readonly inbox: Inbox;
  /** Who is on the bus; forgetting, retiring, topics, `whoami`. */
  readonly roster: Roster;
  /** Session addresses: taken, ended, renamed, running; which session a hook speaks for. */
  readonly sessions: Sessions;
  /** Broadcast notices: publish, list, acknowledge, clear, deliver. */
  readonly notices: Notices;
  /** What the wake paths need: the rate limit, watchers, routes. */
  readonly wakes: Wakes;
  /** The brain adapter's records: its state, markers, tool-call counts. */
  readonly brain: BrainRecords;
  /** File reservations, the writes they meet, and collisions. */
  readonly reservations: Reservations;
  /** Where each agent's turn stands, as its hooks note it, and callers told when one gets somewhere. */
  readonly presence: Presence;
  /** The tasks an agent holds, and the stop hook's reminder of them. */
  readonly taskReminders: TaskReminders;

  constructor(
    protected readonly store: Store,
    protected readonly audit: AuditSink,
    readonly settings: BusSettings,
    options: HookBusOptions,
  ) {
    const clock = options.clock ?? systemClock;
    this.clock = clock;
    this.sessions = new Sessions(store, audit, clock, settings, options.liveness);
    const isRunning = this.sessions.isRunning.bind(this.sessions);
    this.roster = new Roster(store, audit, clock, isRunning, this.sessions.clientRunsOn.bind(this.sessions));
    this.mail = new Mail(store, audit, clock, settings, options.afterSend ?? null, (clientAddress) => this.sessions.liveNames(clientAddress));
    this.inbox = new Inbox(store, audit, clock);
    this.notices = new Notices(store, audit, clock, settings.channelMaxNotices);
    this.wakes = new Wakes(store, audit, clock);
    this.brain = new BrainRecords(store, clock);
    this.reservations = new Reservations(store, audit, clock, settings, () => this.sessions.liveNames());
    this.presence = new Presence(store, clock, this.roster, this.mail);
    this.taskReminders = new TaskReminders(store, clock);
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
