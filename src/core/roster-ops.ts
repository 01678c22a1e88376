/**
 * The roster: who is on the bus, in which repo, seen when, with their unread counts and whether a
 * session's server runs; forgetting and retiring names; topics; and who a session is (`whoami`).
 */
import { stampToMillis, stampOf, type Clock } from '../model/clock.js';
import { BusError } from '../model/errors.js';
import type { AgentRecord, PresenceRecord, PresenceState, Registration, SessionRecord } from '../model/records.js';
import { quoted } from '../model/quote.js';
import type { IntegrationsPort, RosterPort } from '../store/ports.js';
import type { PresencePort } from '../store/ports/presence.js';
import type { TasksPort } from '../store/ports/tasks.js';
import type { WakePort, WatcherRow } from '../store/ports/wake.js';
import type { AuditSink } from './audit-sink.js';
import { clientAddressOf, repoOf, parseNameLenient } from './names.js';
import { pendingByName, registrationsFor, repoMembers, waitingRepoNames } from './roster.js';
import { agentView, type AgentView, type WakeFact } from './views.js';

export const MAX_TOPIC_LENGTH = 200;

/**
 * A name is noted as seen at most this often: hooks and tool calls count as activity (idle
 * skipping must not silence an agent that is working) without a write at every turn.
 */
export const TOUCH_INTERVAL_MS = 60_000;
/** Names a process remembers noting, at most: past it the memory starts again (a name is then noted once more). */
const MAX_NOTED = 10_000;

export interface ForgetResult {
  name: string;
  removed: boolean;
  pending: number;
}

/** Who a session is on the bus. */
export interface WhoamiView {
  name: string;
  group: string;
  client: string | null;
  client_address: string | null;
  session: string | null;
  instance: number | null;
  topic: string | null;
  repo_path: string | null;
  registered_at: string | null;
  last_seen: string | null;
  group_members: Array<Pick<AgentView, 'name' | 'kind' | 'client' | 'topic' | 'last_seen' | 'live'>>;
}

/** Who a session is, from its name and the roster as read (empty when the store could not be read). */
export function composeWhoami(name: string, roster: AgentView[]): WhoamiView {
  const parsed = parseNameLenient(name);
  const agent = roster.find((row) => row.name === name);
  // `group` in the JSON: the repo, as the tools have always named it.
  const repo = parsed?.repo ?? repoOf(name);
  return {
    name,
    group: repo,
    client: parsed?.client ?? null,
    client_address: clientAddressOf(name),
    session: parsed?.handle ?? null,
    instance: parsed?.handle && /^\d+$/.test(parsed.handle) ? Number(parsed.handle) : null,
    topic: agent?.topic ?? null,
    repo_path: agent?.repo_path ?? null,
    registered_at: agent?.registered_at ?? null,
    last_seen: agent?.last_seen ?? null,
    group_members: roster
      .filter((row) => row.group === repo)
      .map((member) => ({ name: member.name, kind: member.kind, client: member.client, topic: member.topic, last_seen: member.last_seen, live: member.live })),
  };
}

/**
 * A name's state: a session address whose server closed is ended, one whose process is not running
 * is gone; otherwise what its hooks last said (working, idle, waiting), or unknown where none has.
 */
function presenceOf(agent: AgentRecord, noted: PresenceRecord | undefined, holder: SessionRecord | undefined, running: boolean): { state: PresenceState; since: string | null } {
  const parsed = parseNameLenient(agent.name);
  if (parsed !== null && parsed.handle !== null) {
    if (holder === undefined) return { state: 'ended', since: null };
    if (!running) return { state: 'gone', since: holder.lastSeen };
  }
  return noted === undefined ? { state: 'unknown', since: null } : { state: noted.state, since: noted.since };
}

/** What a session's watcher row says of how it is woken. */
function watcherFact(row: WatcherRow): WakeFact {
  if (row.way === 'socket') return { way: 'socket', note: null };
  if (row.way === 'refused') return { way: 'socket-refused', note: row.note };
  return { way: 'watcher', note: null };
}

export class Roster {
  constructor(
    private readonly store: RosterPort & Pick<PresencePort, 'presence'> & Pick<TasksPort, 'tasksIn'> & Pick<IntegrationsPort, 'integrations'> & Pick<WakePort, 'watchers'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    /** Whether a session row's server is running (the sessions' own judge). */
    private readonly isRunning: (row: SessionRecord) => boolean,
    /** Whether a session row's client runs on without its server (the sessions' own judge). */
    private readonly clientRunsOn: (row: SessionRecord) => boolean = () => false,
  ) {}

  async register(registrations: Registration[]): Promise<void> {
    await this.store.register(registrations, stampOf(this.clock));
  }

  /** Mark names as seen now. */
  async touch(names: string[]): Promise<void> {
    await this.store.touch(names, stampOf(this.clock));
  }

  /**
   * Note `name` (and the client address it shares) as seen, unless it was noted within the touch
   * interval: by this process (`noted`, its memory of when it noted each name, in ms), or, as the
   * store says, by anyone. A fresh process (a hook) has no memory and asks the store.
   */
  async touchIfStale(name: string, noted?: Map<string, number>): Promise<void> {
    const nowMs = this.clock.nowMicros() / 1000;
    if (noted !== undefined) {
      if (nowMs - (noted.get(name) ?? Number.NEGATIVE_INFINITY) < TOUCH_INTERVAL_MS) return;
      if (noted.size >= MAX_NOTED) noted.clear();
      noted.set(name, nowMs);
    }
    const agent = await this.store.getAgent(name);
    if (agent && nowMs - stampToMillis(agent.lastSeen) < TOUCH_INTERVAL_MS) return;
    const shared = clientAddressOf(name);
    await this.touch(shared !== null && shared !== name ? [name, shared] : [name]);
  }

  /** The roster with pending counts and session liveness, ordered by name; optionally one repo. */
  async agents(repo?: string): Promise<AgentView[]> {
    const snapshot = await this.store.roster(waitingRepoNames);
    const pending = pendingByName(snapshot);
    const live = new Set<string>();
    for (const holder of snapshot.sessionHolders) if (this.isRunning(holder)) live.add(holder.name);
    const agents = repo === undefined ? snapshot.agents : repoMembers(snapshot.agents, repo);
    const noted = new Map((await this.store.presence()).map((row) => [row.name, row]));
    const inHand = new Map<string, { id: string; title: string }>();
    for (const task of await this.store.tasksIn(['taken'], 1_000)) if (task.holder !== null && !inHand.has(task.holder)) inHand.set(task.holder, { id: task.taskId, title: task.title });
    const holders = new Map(snapshot.sessionHolders.map((row) => [row.name, row]));
    const integrations = new Set((await this.store.integrations()).map((row) => row.name));
    const watched = new Map((await this.store.watchers()).map((row) => [row.agent, watcherFact(row)]));
    return agents.map((agent) => {
      const holder = holders.get(agent.name);
      const facts = presenceOf(agent, noted.get(agent.name), holder, live.has(agent.name));
      const serverGone = holder !== undefined && !live.has(agent.name) && this.clientRunsOn(holder);
      return agentView(agent, pending.get(agent.name) ?? 0, live.has(agent.name), { ...facts, task: inHand.get(agent.name) ?? null }, integrations.has(agent.name), watched.get(agent.name) ?? null, serverGone);
    });
  }


  get(name: string): Promise<AgentRecord | null> {
    return this.store.getAgent(name);
  }

  /** Roster rows registered for a repo path (how a hook finds its agent). */
  at(repoPath: string): Promise<AgentRecord[]> {
    return this.store.agentsAt(repoPath);
  }

  async forget(name: string): Promise<ForgetResult> {
    if (!name.includes('/')) {
      const mates = repoMembers(await this.store.agentsOfRepo(name), name).filter((agent) => agent.name !== name).map((agent) => agent.name);
      if (mates.length > 0) {
        throw new BusError(
          `${quoted(name)} is a repo with ${mates.length} agent(s): ${mates.join(', ')}. ` +
            `Forget one by its full name, or all of them with \`agent-bus forget --group ${name}\`.`,
        );
      }
    }
    const outcome = await this.store.forget(name);
    return { name, ...outcome };
  }

  /** Forget every agent of a repo: the names forgotten, sorted. */
  async forgetRepo(repo: string): Promise<string[]> {
    const names = repoMembers(await this.store.agentsOfRepo(repo), repo).map((agent) => agent.name);
    return (await this.store.removeAgents(names)).sort();
  }

  async setTopic(name: string, topic: string | null): Promise<string | null> {
    const trimmed = topic === null ? null : Array.from(topic.trim()).slice(0, MAX_TOPIC_LENGTH).join('');
    const value = trimmed === '' ? null : trimmed;
    await this.store.setTopic(name, value);
    return value;
  }

  /**
   * Put a repo's client addresses on the roster before any session of theirs has run (`agent-bus
   * init`), so mail to them, or to their repo, waits for the first session. A name already filed for
   * this repo is left as it is; one filed for a folder that is gone moves here; one filed for another
   * repo that is still there stays (the two share an inbox: init says so). Each name filed is
   * audited as `register`. Returns the names filed.
   */
  async enrol(names: string[], repoPath: string, actor: string, exists: (path: string) => boolean): Promise<string[]> {
    const filed: string[] = [];
    for (const name of names) {
      const known = await this.store.getAgent(name);
      if (known !== null && (known.repoPath === repoPath || exists(known.repoPath))) continue;
      await this.register(registrationsFor(name, repoPath, true));
      filed.push(name);
      this.audit.append([
        {
          ts: stampOf(this.clock),
          op: 'register',
          actor,
          message_id: null,
          from: actor,
          to: name,
          thread_id: null,
          body_preview: known === null ? `${quoted(name)} put on the roster for ${repoPath}` : `${quoted(name)} moved on the roster from ${known.repoPath}, which is gone, to ${repoPath}`,
          body_sha256: null,
        },
      ]);
    }
    return filed;
  }

  /** Retire a name `agent-bus init` replaced, keeping its unread mail reachable; audited as `retire`. */
  async retire(old: string, successor: string): Promise<void> {
    if (old === successor) return;
    // A successor in the repo the old name now addresses: the old name's mail waits there for that repo's first reader.
    const outcome = await this.store.retire(old, repoOf(successor) === old ? null : successor);
    if (!outcome.removed && outcome.moved === 0) return;
    const what =
      outcome.moved > 0 || repoOf(successor) !== old
        ? `${outcome.moved} unread message(s) re-addressed`
        : `${outcome.left} unread message(s) left for ${quoted(old)} to be picked up by the first agent in that repo to read`;
    this.audit.append([
      {
        ts: stampOf(this.clock),
        op: 'retire',
        actor: 'agent-bus init',
        message_id: null,
        from: old,
        to: successor,
        thread_id: null,
        body_preview: `${quoted(old)} is now wired as ${quoted(successor)}; ${what}`,
        body_sha256: null,
      },
    ]);
  }
}
