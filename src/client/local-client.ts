/**
 * The bus of this machine as a `BusClient`: the store this process opens, spoken to as the
 * command's speaker. Mail is sent and read as the speaker; what a search or a receipt shows is
 * what `as` may see when the command line names one, and every message otherwise (the human at
 * this machine's own bus).
 */
import type { SpawnView } from '../core/fleet-ops.js';
import { supervisorGone } from '../adapters/procs.js';
import type { Bus } from '../core/bus.js';
import { receivedCounts } from '../core/notice-ops.js';
import { sessionStatus } from '../core/session-status.js';
import { resolveIdentity, sessionsEnabled } from '../adapters/identity.js';
import type { Env } from '../model/settings.js';
import type { ChangeFeed } from '../core/store-changes.js';
import { brainSettings } from '../brain/settings.js';
import { brainStatus } from '../brain/status.js';
import { loadRefresh } from '../brain/load.js';
import { writeMarkers } from '../brain/writer.js';
import { hookSessionFacts } from '../clients/registry/session-facts.js';
import { systemProcessTable } from '../adapters/procs.js';
import { serveOutbox } from '../adapters/outbox-serving.js';
import { LocalAudit } from './local-audit.js';
import { speakerRegistrations } from './speaker.js';
import { NOT_ON_THE_BUS, type AuditDesk, type BrainDesk, type BusClient, type BusLocation, type NoticeDesk, type ReservationDesk, type SearchOptions, type SessionCounts, type SessionCountsRequest, type TaskDesk } from './bus-client.js';
import { taskStatesOf } from '../core/task-ops.js';

export class LocalClient implements BusClient {
  readonly location: BusLocation;
  readonly notices: NoticeDesk;
  readonly reservations: ReservationDesk;
  readonly tasks: TaskDesk;
  readonly brain: BrainDesk;
  readonly audit: AuditDesk;
  private opened: Bus | null = null;
  private outbox: { stop: () => Promise<void> } | null = null;

  /**
   * `openBus` opens the store on first use (a tail of the audit log reads only the file).
   * `as`: the name the command line asked to act as, which narrows what searches and receipts show
   * (null: everything); the speaker, who sends and reads, is `as`, else the environment's
   * (`speakerOf`, asked only by what speaks).
   */
  constructor(
    private readonly openBus: () => Bus,
    private readonly place: { env: Env; cwd: string; database: string; auditPath: string },
    private readonly as: string | null,
    private readonly speakerOf: () => string,
  ) {
    this.location = { kind: 'here', database: place.database };
    const notices = () => this.bus.notices;
    this.notices = {
      publish: (request) => notices().publish(request),
      list: (options) => notices().list(options),
      channels: () => notices().channels(),
      acknowledge: (noticeId, session) => notices().acknowledge(noticeId, session),
      clear: (target) => notices().clear(target),
    };
    // On this machine a person may release another's reservations (the human at the keyboard owns the bus).
    this.reservations = {
      reserve: async ({ place, paths, ttlMs, reason, shared }) =>
        this.bus.reservations.reserve({ holder: this.name, repo: place.repo, repoRoot: place.root, paths, ...(ttlMs === undefined ? {} : { ttlMs }), reason, shared, sessionBound: false }),
      release: async ({ place, paths, holder }) =>
        this.bus.reservations.release({ holder: holder ?? this.name, repo: place?.repo ?? null, paths, repoRoot: place?.root ?? null, actor: this.name }),
      list: async (repo) => this.bus.reservations.list(repo),
      inTheWay: async ({ place, files, client, sessionKey, refuse }) => {
        const { bus } = this;
        const { env } = this.place;
        // The committer: the agent whose client session the environment names, as its hooks know it; else the speaker.
        const identity = this.as !== null ? null : await resolveIdentity({ env, client: client ?? undefined, cwd: place.root }, bus.roster, 'hook').catch(() => null);
        const agent = identity?.kind === 'agent' ? identity.name : null;
        if (agent === null) return bus.reservations.checkCommit(this.name, async () => this.name, place.repo, files, refuse);
        const reader = () => bus.sessions.readerFor(agent, sessionKey, hookSessionFacts(agent, sessionsEnabled(env), systemProcessTable(env)));
        return bus.reservations.checkCommit(agent, reader, place.repo, files, refuse);
      },
    };
    // The speaker acts; a task made here is the speaker's, who is put on the roster to hear its result.
    const tasks = () => this.bus.tasks;
    this.tasks = {
      create: ({ title, to, body, after }) => tasks().create({ creator: this.name, title, to, body, after }, this.registrations()),
      take: (id) => tasks().take(id, this.name, false),
      complete: (id, result) => tasks().complete(id, this.name, result),
      fail: (id, reason) => tasks().fail(id, this.name, reason),
      cancel: (id, reason) => tasks().cancel(id, this.name, reason),
      get: (id) => tasks().get(id),
      list: ({ state, mine, created, repo }) =>
        tasks().list({ states: taskStatesOf(state), mine: mine ? this.name : null, createdBy: created ? this.name : null, repo }),
      wait: (id, timeoutMs) => tasks().wait(id, timeoutMs, this.bus.changes()),
    };
    const settings = () => brainSettings(place.env);
    this.brain = {
      status: (source) => brainStatus(this.bus, settings(), source),
      // The refresh (a YAML parser, an HTTP client) is loaded only when one runs, as the hooks load it.
      refresh: async () => {
        const brain = settings();
        const { refreshBrain } = await loadRefresh();
        return { channel: brain.channel, ...(await refreshBrain(this.bus, brain)) };
      },
      writeMarkers: async (payload) => writeMarkers(this.bus, settings(), place.env, await payload()),
    };
    this.audit = new LocalAudit(() => this.bus, place.auditPath);
  }

  private spoken: string | null = null;

  private get name(): string {
    this.spoken ??= this.as ?? this.speakerOf();
    return this.spoken;
  }

  private get bus(): Bus {
    this.opened ??= this.openBus();
    return this.opened;
  }

  async speaker(): Promise<string> {
    return this.name;
  }

  private registrations() {
    return speakerRegistrations(this.name, this.place.env, this.place.cwd);
  }

  register(): Promise<void> {
    return this.bus.roster.register(this.registrations());
  }

  agents() {
    return this.bus.roster.agents();
  }

  async spawned(): Promise<SpawnView[]> {
    return this.bus.fleet.views(await this.bus.fleet.latest(), supervisorGone);
  }

  async send(request: { to: string; body: string; threadId?: string | null; urgent?: boolean }) {
    // A reply names its thread as the bus showed it; a thread nobody knows is refused, never started.
    const threadId = request.threadId !== null && request.threadId !== undefined ? await this.bus.mail.resolveThread(request.threadId) : null;
    const result = await this.bus.mail.send({ from: this.name, to: request.to, body: request.body, threadId, register: this.registrations(), urgent: request.urgent ?? false });
    return { result, from: this.name };
  }

  async readInbox(request: { markRead: boolean; limit: number; way: 'inbox' | 'chat' }) {
    // Read: marked read and delivered by the surface showing it. A peek shows it to whoever ran it, not
    // (as far as anyone can tell) its reader: nothing is recorded. The chat hands mail to a person: audited as delivered.
    const messages = await this.bus.inbox.read({
      reader: this.name,
      markRead: request.markRead,
      limit: request.limit,
      via: request.markRead ? request.way : null,
      deliver: request.way === 'chat',
    });
    return { reader: this.name, messages };
  }

  thread(threadId: string, limit?: number) {
    return this.bus.mail.thread(threadId, limit);
  }


  recentMessages(limit?: number) {
    return this.bus.mail.recent(limit);
  }

  search(options: SearchOptions) {
    return this.bus.mail.search({ ...options, reader: this.as });
  }

  messageStatus(id: string) {
    return this.bus.receipts.status(id, this.as);
  }

  awaitReceipts(...[id, wanted, timeoutMs, onChange]: Parameters<BusClient['awaitReceipts']>) {
    return this.bus.receipts.await(id, this.as, wanted, timeoutMs, onChange);
  }

  forget(name: string) {
    return this.bus.roster.forget(name);
  }

  forgetRepo(repo: string) {
    return this.bus.roster.forgetRepo(repo);
  }

  /** As the hooks find the session's name: from its identity, then the session its client's id or process holds. */
  async sessionCounts(request: SessionCountsRequest): Promise<SessionCounts> {
    const { bus } = this;
    const env = this.place.env;
    const identity = await resolveIdentity({ env, client: request.client, payloadDir: request.payloadDir ?? undefined, cwd: request.cwd }, bus.roster, 'hook').catch(() => null);
    if (identity === null || identity.kind !== 'agent') return { ...NOT_ON_THE_BUS, notices: receivedCounts(await bus.notices.channels(), request.subscriptions) };
    const reader = await bus.sessions.readerFor(identity.name, request.sessionKey, hookSessionFacts(identity.name, sessionsEnabled(env), systemProcessTable(env)));
    return sessionStatus(bus, reader, request.subscriptions);
  }

  changes(): ChangeFeed {
    return this.bus.changes();
  }

  keepSearchIndexCurrent(): void {
    this.bus.mail.keepSearchIndexCurrent();
  }

  serveOutbox(): void {
    this.outbox ??= serveOutbox(this.bus, this.place.env);
  }

  async close(): Promise<void> {
    await this.outbox?.stop();
    await this.opened?.close();
  }
}
