/**
 * The fleet's rules: a spawn request made into a named, queued record; a slot taken under the
 * machine's limit; an exit recorded once with its category; a stop asked for. Where a process runs
 * and how it is watched is fleet/'s; this decides what the store keeps and what the audit log says.
 */
import { textRow, type AuditRow } from '../audit/record.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import { timeOrderedId } from '../model/ids.js';
import { quoted } from '../model/quote.js';
import type { ExitCategory, RunnerRecord, SpawnRecord, SpawnTmux } from '../model/records.js';
import { shortId } from '../model/short-id.js';
import { stampOf, stampToMillis, type Clock } from '../model/clock.js';
import type { SpawnExit, Store } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { composeName, handleProblem, normaliseLabel } from './names.js';
import { DEFAULT_MAX_RESTARTS } from '../model/fleet.js';

/** How much of a remote agent's log the hub keeps: its last lines, as its runner sends them. */
export const LOG_TAIL_CHARS = 64 * 1024;

/** How many of its heartbeats a runner may miss before it counts as away, and its running agents as unknown. */
const MISSED_HEARTBEATS = 3;

/** Whether a runner has gone unheard too long: its agents' state is unknown until it returns. */
export function runnerAway(runner: Pick<RunnerRecord, 'seenAt' | 'heartbeatMs'>, nowMs: number): boolean {
  return nowMs - stampToMillis(runner.seenAt) > MISSED_HEARTBEATS * runner.heartbeatMs + 1_000;
}

/** The clients the bus can start, each in its own headless mode. */
export const SPAWNABLE_CLIENTS = ['claude', 'codex', 'opencode', 'gemini', 'copilot', 'pi', 'qwen', 'cline'] as const;
export type SpawnableClient = (typeof SPAWNABLE_CLIENTS)[number];

export interface SpawnRequest {
  client: string;
  repo: string;
  folder: string;
  machine: string;
  prompt: string;
  label: string | null;
  model: string | null;
  yolo: boolean;
  taskId: string | null;
  spawnedBy: string;
  /** The depth of whoever asks: 0 for a person, the spawned agent's own depth for an agent. */
  askerDepth: number;
  maxDepth: number;
  /** Where its output goes, given its name and id. */
  logPathFor(name: string, spawnId: string): string;
  /** Whether a crash starts it again on its own session, and at most how many times. */
  restartPolicy?: 'on-failure' | null;
  maxRestarts?: number;
  /** It runs in a git worktree of its own (made already, as `folder`; or by its runner when it starts it). */
  worktree?: boolean;
  /** Interactive in a tmux window of its machine, rather than headless. */
  tmux?: boolean;
}

export { DEFAULT_MAX_RESTARTS };

/** The tmux place of a run not yet started: interactive in tmux, its window still to be made. */
const TMUX_TO_MAKE: SpawnTmux = { socket: null, session: null, window: null, pane: null };
export type { SpawnExit };

/** Whether an exit is a crash a restart policy answers: not a finish, a stop, or a start that failed. */
export function isCrash(category: ExitCategory | null): boolean {
  return category === 'failed' || category === 'signal' || category === 'oom';
}

/** How long a crashed agent waits before its next restart: a second, doubling, at most a minute. */
export function restartCooldownMs(restartsBefore: number): number {
  return Math.min(60_000, 1_000 * 2 ** restartsBefore);
}

/** A spawn refused before anything was kept: a depth too deep, a label taken, a client unknown. */
export class SpawnRefusedError extends BusError {}

/** What an exit was: finished, failed, killed by a signal, out of memory, stopped, or never started. */
export function exitCategoryOf(exit: { code: number | null; signal: string | null; stopRequested: boolean; startFailed?: boolean }): ExitCategory {
  if (exit.startFailed) return 'start-failed';
  if (exit.stopRequested) return 'stopped';
  // 137 is 128 + SIGKILL, as a shell reports a process the kernel's OOM killer ended.
  if (exit.code === 137) return 'oom';
  if (exit.signal !== null) return exit.signal === 'SIGKILL' ? 'oom' : 'signal';
  // A shell says a process a signal ended as 128 and the signal's number.
  if (exit.code !== null && exit.code > 128 && exit.code < 128 + 32) return 'signal';
  return exit.code === 0 ? 'finished' : 'failed';
}

/** An exit as a person reads it: `exit 0 (finished)`, `SIGTERM (stopped)`. */
export function exitText(spawn: Pick<SpawnRecord, 'exitCode' | 'exitSignal' | 'exitCategory'>): string {
  const how = spawn.exitSignal !== null ? spawn.exitSignal : spawn.exitCode !== null ? `exit ${spawn.exitCode}` : 'no exit code';
  return `${how} (${spawn.exitCategory ?? 'unknown'})`;
}

/** A label that reads as a word and never as a session number: a letter, then four letters or digits. */
export function generatedLabel(random: () => number = Math.random): string {
  const letters = 'abcdefghjkmnpqrstuvwxyz';
  const chars = `${letters}23456789`;
  let label = letters[Math.floor(random() * letters.length)] as string;
  for (let index = 0; index < 4; index++) label += chars[Math.floor(random() * chars.length)] as string;
  return label;
}

/** What a run is before its supervisor takes it: queued, with no process and no exit. */
const NOT_STARTED = {
  state: 'queued',
  supervisor: null,
  pid: null,
  startedAt: null,
  endedAt: null,
  exitCode: null,
  exitSignal: null,
  exitCategory: null,
  exitNote: null,
  stopRequestedAt: null,
} as const satisfies Partial<SpawnRecord>;

function spawnRow(event: string, ts: string, actor: string, spawn: SpawnRecord, extra: Record<string, unknown> = {}): AuditRow {
  return textRow('spawn', ts, actor, { id: spawn.spawnId, from: spawn.spawnedBy, to: spawn.name, threadId: null, body: `${event}: ${spawn.prompt}` }, {
    event,
    client: spawn.client,
    machine: spawn.machine,
    yolo: spawn.yolo,
    ...(spawn.taskId === null ? {} : { task_id: spawn.taskId }),
    ...extra,
  });
}

export class Fleet {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
  ) {}

  /** Keep a spawn request, queued, under a name no spawn of this bus has had. */
  async request(request: SpawnRequest): Promise<SpawnRecord> {
    if (!(SPAWNABLE_CLIENTS as readonly string[]).includes(request.client)) {
      throw new InvalidInputError(`spawn: ${quoted(request.client)} is no client the bus can start: one of ${SPAWNABLE_CLIENTS.join(', ')}`);
    }
    if (request.prompt.trim() === '') throw new InvalidInputError('spawn: the prompt is empty: give --prompt TEXT (or - to read it from standard input)');
    if (request.askerDepth >= request.maxDepth) {
      throw new SpawnRefusedError(
        `spawn: ${request.spawnedBy} is a spawned agent at depth ${request.askerDepth}, and spawned agents go ${request.maxDepth} deep at most (AGENT_BUS_MAX_SPAWN_DEPTH): nothing was started`,
      );
    }
    let label: string;
    if (request.label !== null) {
      label = normaliseLabel(request.label);
      const problem = handleProblem(label);
      if (problem !== null) throw new InvalidInputError(`spawn: --label: ${problem}`);
      if ((await this.store.spawnOf(composeName(request.repo, request.client, label))) !== null) {
        throw new SpawnRefusedError(`spawn: ${composeName(request.repo, request.client, label)} was spawned before: pick another --label, or 'agent-bus resume' it`);
      }
    } else {
      label = generatedLabel();
      while ((await this.store.spawnOf(composeName(request.repo, request.client, label))) !== null) label = generatedLabel();
    }
    const name = composeName(request.repo, request.client, label);
    const spawnId = timeOrderedId();
    const now = stampOf(this.clock);
    const spawn: SpawnRecord = {
      spawnId,
      name,
      client: request.client,
      label,
      repo: request.repo,
      folder: request.folder,
      machine: request.machine,
      prompt: request.prompt,
      model: request.model,
      yolo: request.yolo,
      taskId: request.taskId,
      spawnedBy: request.spawnedBy,
      depth: request.askerDepth + 1,
      logPath: request.logPathFor(name, spawnId),
      createdAt: now,
      ...NOT_STARTED,
      sessionKey: null,
      restartPolicy: request.restartPolicy ?? null,
      maxRestarts: request.restartPolicy ? (request.maxRestarts ?? DEFAULT_MAX_RESTARTS) : 0,
      restarts: 0,
      worktree: request.worktree ?? false,
      tmux: request.tmux ? TMUX_TO_MAKE : null,
    };
    await this.store.addSpawn(spawn);
    this.audit.append([spawnRow('request', now, request.spawnedBy, spawn)]);
    return spawn;
  }

  /**
   * Ask for an ended agent to be started again on its own session: a new spawn of the same name,
   * repo, folder, client and task, queued, which its client resumes by the session's id.
   */
  async resume(previous: SpawnRecord, request: { prompt: string; spawnedBy: string; machine: string; logPathFor(name: string, spawnId: string): string; restart?: boolean }): Promise<SpawnRecord> {
    if (previous.state !== 'exited') throw new BusError(`resume: ${previous.name} is ${previous.state}: only an agent that has ended is resumed ('agent-bus stop' it first)`);
    // A restart with no session known starts a new one, with the first prompt.
    if (previous.sessionKey === null && !request.restart) {
      throw new BusError(`resume: no session of ${previous.name} is known (its hooks never named one, nor did its output): 'agent-bus spawn' a new one instead`);
    }
    if (request.prompt.trim() === '') throw new InvalidInputError('resume: the prompt is empty');
    const spawnId = timeOrderedId();
    const now = stampOf(this.clock);
    const spawn: SpawnRecord = {
      ...previous,
      spawnId,
      machine: request.machine,
      prompt: request.prompt,
      spawnedBy: request.spawnedBy,
      logPath: request.logPathFor(previous.name, spawnId),
      createdAt: now,
      ...NOT_STARTED,
      restarts: request.restart ? previous.restarts + 1 : 0,
      // Interactive in tmux again, in a window of its own.
      tmux: previous.tmux === null ? null : TMUX_TO_MAKE,
    };
    await this.store.addSpawn(spawn);
    this.audit.append([spawnRow(request.restart ? 'restart' : 'resume', now, request.spawnedBy, spawn, { session: previous.sessionKey, restarts: spawn.restarts })]);
    return spawn;
  }

  /** The client's own id of the agent's conversation as its hooks saw it (its session's row, else Codex's route), or null. */
  async hooksSession(spawn: SpawnRecord): Promise<string | null> {
    const rows = (await this.store.sessionRows(`${spawn.repo}/${spawn.client}`)).filter((row) => row.name === spawn.name && row.sessionKey);
    const latest = rows.sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))[0];
    if (latest?.sessionKey) return latest.sessionKey;
    const routes = (await this.store.routes(spawn.name)).sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1));
    return routes[0]?.threadId ?? null;
  }

  /** Note the client's own id of the agent's conversation, as its hooks or its output named it. */
  async noteSession(spawnId: string, sessionKey: string): Promise<void> {
    await this.store.noteSpawnSession(spawnId, sessionKey);
  }

  /** Name the supervisor that waits for a slot for a queued spawn: a queue whose supervisor is gone can then be told. */
  async waiting(spawnId: string, supervisor: string): Promise<void> {
    await this.store.noteSpawnWaiter(spawnId, supervisor);
  }

  /** Take a slot on the spawn's machine for it, if one is free: whether it may start now. */
  async claimSlot(spawnId: string, supervisor: string, max: number): Promise<boolean> {
    return this.store.claimSpawnSlot(spawnId, supervisor, max, stampOf(this.clock));
  }

  /** The folder it runs in: its worktree, once its runner has made it. */
  async movedTo(spawnId: string, folder: string): Promise<void> {
    await this.store.noteSpawnFolder(spawnId, folder);
  }

  /** The process it started as, and the tmux window it runs in where it runs in one. */
  async started(spawn: SpawnRecord, pid: number, tmux?: SpawnTmux): Promise<void> {
    await this.store.noteSpawnPid(spawn.spawnId, pid, tmux);
    this.audit.append([spawnRow('start', stampOf(this.clock), spawn.name, spawn, { pid, ...(tmux === undefined ? {} : { tmux_window: tmux.window }) })]);
  }

  /** Record how it ended, once: the record as it now stands, or null when another recorded it first. */
  async exited(spawnId: string, exit: Omit<SpawnExit, 'endedAt'>): Promise<SpawnRecord | null> {
    const endedAt = stampOf(this.clock);
    if (!(await this.store.recordSpawnExit(spawnId, { ...exit, endedAt }))) return null;
    const after = await this.store.spawnById(spawnId);
    if (after === null) return null;
    this.audit.append([spawnRow('exit', endedAt, after.name, after, { exit_code: exit.exitCode, exit_signal: exit.exitSignal, category: exit.exitCategory })]);
    return after;
  }

  /** Ask for a spawn to stop: the record, or an error when it has ended already. */
  async requestStop(spawn: SpawnRecord, actor: string): Promise<SpawnRecord> {
    const now = stampOf(this.clock);
    if (!(await this.store.requestSpawnStop(spawn.spawnId, now))) throw new BusError(`stop: ${spawn.name} has ended already: ${exitText(spawn)}`);
    this.audit.append([spawnRow('stop', now, actor, spawn)]);
    return (await this.store.spawnById(spawn.spawnId)) ?? spawn;
  }

  async list(): Promise<SpawnRecord[]> {
    return this.store.spawns();
  }

  /** Keep a remote agent's log's last lines, as its runner sent them. */
  async noteLog(spawnId: string, tail: string): Promise<void> {
    await this.store.noteSpawnLog(spawnId, tail.slice(-LOG_TAIL_CHARS));
  }

  /** A remote agent's log's last lines as its runner last sent them (none yet: empty). */
  async remoteLog(spawnId: string): Promise<string[]> {
    const tail = await this.store.spawnLog(spawnId);
    return tail === null || tail === '' ? [] : tail.replace(/\n$/, '').split('\n');
  }

  /** A runner offering its machine (said again as its heartbeat), heard now; the first offer is audited. */
  async offerRunner(offer: Omit<RunnerRecord, 'seenAt'>): Promise<RunnerRecord> {
    const runner: RunnerRecord = { ...offer, seenAt: stampOf(this.clock) };
    const before = (await this.store.runners()).find((known) => known.machine === offer.machine);
    await this.store.offerRunner(runner);
    if (before?.startedAt !== offer.startedAt) {
      this.audit.append([
        textRow('spawn', runner.seenAt, offer.agent, { id: `runner:${offer.machine}`, from: offer.agent, to: offer.machine, threadId: null, body: `runner: ${offer.machine} runs ${offer.clients.join(', ')} in ${offer.repos.map((repo) => repo.repo).join(', ')}` }, {
          event: 'runner',
          machine: offer.machine,
          clients: offer.clients,
          max: offer.maxSpawned,
        }),
      ]);
    }
    return runner;
  }

  async runners(): Promise<RunnerRecord[]> {
    return this.store.runners();
  }

  /** Spawns as listings show them, each marked with its machine's runner (present, away, or none). */
  async views(spawns: SpawnRecord[], supervisorGone?: (supervisor: string) => boolean | null): Promise<SpawnView[]> {
    const now = this.clock.nowMicros() / 1000;
    const runners = new Map((await this.store.runners()).map((runner) => [runner.machine, runner]));
    return spawns.map((spawn) => {
      const runner = runners.get(spawn.machine);
      return spawnView(spawn, supervisorGone, runner === undefined ? null : runnerAway(runner, now) ? 'away' : 'present');
    });
  }

  /** Each spawned agent as it now stands: the latest run of each name. */
  async latest(): Promise<SpawnRecord[]> {
    const latest = new Map<string, SpawnRecord>();
    for (const spawn of await this.store.spawns()) latest.set(spawn.name, spawn);
    return [...latest.values()];
  }

  /** The latest spawn of exactly this name, or null (a person, or an agent the bus did not start). */
  async named(name: string): Promise<SpawnRecord | null> {
    return this.store.spawnOf(name);
  }

  async byId(spawnId: string): Promise<SpawnRecord | null> {
    return this.store.spawnById(spawnId);
  }

  /** A spawned agent by its name (the latest of that name), or by its id or the id's short form. */
  async find(nameOrId: string): Promise<SpawnRecord> {
    const wanted = nameOrId.trim();
    const byName = await this.store.spawnOf(wanted);
    if (byName !== null) return byName;
    const all = await this.store.spawns();
    const byId = all.filter((spawn) => spawn.spawnId === wanted || shortId(spawn.spawnId) === wanted);
    if (byId.length === 1) return byId[0] as SpawnRecord;
    throw new BusError(`no spawned agent named ${quoted(wanted)} ('agent-bus agents' lists them)`);
  }
}

/** A spawned agent as listings and `--json` show it. */
export interface SpawnView {
  name: string;
  spawn_id: string;
  client: string;
  repo: string;
  folder: string;
  machine: string;
  /** As the store has it; `unknown` for a running agent whose machine's runner is away (it may run still). */
  state: SpawnRecord['state'] | 'unknown';
  pid: number | null;
  yolo: boolean;
  model: string | null;
  task: string | null;
  spawned_by: string;
  depth: number;
  log: string;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  exit_code: number | null;
  exit_signal: string | null;
  exit_category: ExitCategory | null;
  exit_note: string | null;
  stop_requested_at: string | null;
  /** The client's own id of its conversation, where known (what `resume` continues). */
  session: string | null;
  /** Its supervisor, `<host>/<pid>/<random>`, once it has one. */
  supervisor: string | null;
  /** `on-failure` when a crash starts it again; the most restarts, and how many came before this run. */
  restart: 'on-failure' | null;
  max_restarts: number;
  restarts: number;
  /** Whether it runs in a git worktree of its own, on the branch agent/<label>. */
  worktree: boolean;
  /**
   * A running or queued agent whose supervisor is known to be gone (a process of this machine that no
   * longer runs): its exit will not be recorded by it, nor will it start; `stop` ends it itself. Null
   * where it cannot be told.
   */
  supervisor_gone: boolean | null;
  /** Whether it runs under a runner (on another machine of the hub), and whether that runner is away. */
  runner: 'present' | 'away' | null;
  /**
   * Where it runs interactive in tmux (`spawn --tmux`): its server's socket and the ids of its session,
   * window and pane (null until its window is made); null for an agent run headless.
   */
  tmux: SpawnTmux | null;
}

/**
 * A spawn as listings show it. `supervisorGone` tells of a supervisor on this machine; `runner`, of
 * the runner of its machine, where it has one: an agent whose runner is away is `unknown`, not gone.
 */
export function spawnView(spawn: SpawnRecord, supervisorGone: (supervisor: string) => boolean | null = () => null, runner: 'present' | 'away' | null = null): SpawnView {
  return {
    name: spawn.name,
    spawn_id: spawn.spawnId,
    client: spawn.client,
    repo: spawn.repo,
    folder: spawn.folder,
    machine: spawn.machine,
    state: spawn.state === 'running' && runner === 'away' ? 'unknown' : spawn.state,
    pid: spawn.pid,
    yolo: spawn.yolo,
    model: spawn.model,
    task: spawn.taskId,
    spawned_by: spawn.spawnedBy,
    depth: spawn.depth,
    log: spawn.logPath,
    created_at: spawn.createdAt,
    started_at: spawn.startedAt,
    ended_at: spawn.endedAt,
    exit_code: spawn.exitCode,
    exit_signal: spawn.exitSignal,
    exit_category: spawn.exitCategory,
    exit_note: spawn.exitNote,
    stop_requested_at: spawn.stopRequestedAt,
    session: spawn.sessionKey,
    supervisor: spawn.supervisor,
    restart: spawn.restartPolicy,
    max_restarts: spawn.maxRestarts,
    restarts: spawn.restarts,
    worktree: spawn.worktree,
    supervisor_gone: spawn.state !== 'exited' && spawn.supervisor !== null && runner === null ? supervisorGone(spawn.supervisor) : null,
    runner,
    tmux: spawn.tmux,
  };
}
