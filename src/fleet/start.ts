/**
 * Asking for an agent on this machine: the request kept (queued), the task handed to it, and its
 * supervisor started detached, so the asker returns at once and nothing it holds (its output, its
 * terminal) is held by the agent. A client whose executable cannot be found is refused here, with
 * the exit record and its log line kept, never a silent "started".
 */
import { spawn as startProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Bus } from '../core/bus.js';
import { generatedLabel, SpawnRefusedError, SPAWNABLE_CLIENTS, type SpawnableClient } from '../core/fleet-ops.js';
import { composeName, handleProblem, normaliseLabel } from '../core/names.js';
import { profileFor } from '../clients/registry/profiles.js';
import { addWorktree } from './worktree.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import type { SpawnRecord } from '../model/records.js';
import { shortId } from '../model/short-id.js';
import { setting, type Env } from '../model/settings.js';
import type { TaskView } from '../core/task-ops.js';
import { findExecutable } from './executable.js';
import { executableOf } from './launch.js';
import { logNote, logPathFor } from './logs.js';
import { startSpawnClient } from './supervisor.js';
import { attachCommand, noTmux } from './tmux.js';

export interface StartRequest {
  client: string;
  repo: string;
  folder: string;
  prompt: string;
  label: string | null;
  model: string | null;
  yolo: boolean;
  /** A task the agent is to hold from its start. */
  task: TaskView | null;
  spawnedBy: string;
  /** Its own `git worktree` of the repo, on a new branch `agent/<label>`. */
  worktree?: boolean;
  /** Started again on its own session when it crashes, at most `maxRestarts` times. */
  restartPolicy?: 'on-failure' | null;
  maxRestarts?: number;
  /** Interactive in a tmux window of this machine, for a person to watch or take over, rather than headless. */
  tmux?: boolean;
}

export interface StartContext {
  bus: Bus;
  env: Env;
  busFolder: string;
  /** The program to run the supervisor with: `node` and the CLI's own file. */
  cli: { node: string; script: string };
}

/** The prompt of an agent started for a task: the task, its id, and how it is closed. */
export function taskPrompt(task: TaskView, extra: string | null): string {
  const id = shortId(task.id);
  return [
    `You hold agent-bus task ${id}: ${task.title}`,
    ...(task.body ? ['', task.body] : []),
    ...(extra ? ['', extra] : []),
    '',
    `When it is finished, call complete_task with id ${id} and the result. If you cannot finish it, call fail_task with id ${id} and the reason.`,
  ].join('\n');
}

/** Wait until the supervisor has either started the agent, left it queued, or recorded that it could not start. */
async function settled(bus: Bus, spawnId: string, waitMs: number): Promise<SpawnRecord> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const spawn = await bus.fleet.byId(spawnId);
    if (spawn === null) throw new BusError(`spawn: the request ${spawnId} is gone from the store`);
    if (spawn.state === 'exited' || (spawn.state === 'running' && spawn.pid !== null) || Date.now() >= deadline) return spawn;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What `spawn` and `resume` say of an agent started in tmux: its window, and the command that shows it. */
export function tmuxStarted(spawn: SpawnRecord, env: Env): string {
  const attach = spawn.tmux === null ? null : attachCommand(spawn.tmux, env);
  const where = `started ${spawn.client} (pid ${spawn.pid ?? '?'}) in tmux window ${spawn.tmux?.window ?? '?'}, named ${spawn.name}`;
  return attach === null ? where : `${where}; watch it: ${attach}`;
}

export function clientOf(word: string): SpawnableClient {
  if (!(SPAWNABLE_CLIENTS as readonly string[]).includes(word)) throw new InvalidInputError(`spawn: ${quoted(word)} is no client the bus can start: one of ${SPAWNABLE_CLIENTS.join(', ')}`);
  return word as SpawnableClient;
}

/** A label for a worktree's agent, chosen before the worktree is made: the one given, or a generated one no spawn of the repo has had. */
async function worktreeLabel(bus: Bus, request: StartRequest, client: SpawnableClient): Promise<string> {
  if (request.label !== null) {
    const label = normaliseLabel(request.label);
    const problem = handleProblem(label);
    if (problem !== null) throw new InvalidInputError(`spawn: --label: ${problem}`);
    if ((await bus.fleet.list()).some((spawn) => spawn.name === composeName(request.repo, client, label))) {
      throw new SpawnRefusedError(`spawn: ${composeName(request.repo, client, label)} was spawned before: pick another --label, or 'agent-bus resume' it`);
    }
    return label;
  }
  const taken = new Set((await bus.fleet.list()).map((spawn) => spawn.name));
  let label = generatedLabel();
  while (taken.has(composeName(request.repo, client, label))) label = generatedLabel();
  return label;
}

export async function startAgent(context: StartContext, request: StartRequest): Promise<SpawnRecord> {
  const { bus, env, busFolder } = context;
  const client = clientOf(request.client);
  let { label, folder } = request;
  if (request.worktree) {
    label = await worktreeLabel(bus, request, client);
    folder = addWorktree(busFolder, request.folder, request.repo, label, profileFor(client).configFiles);
  }
  const spawn = await bus.fleet.request({
    client,
    repo: request.repo,
    folder,
    machine: hostname(),
    prompt: request.prompt,
    label,
    model: request.model,
    yolo: request.yolo,
    taskId: request.task?.id ?? null,
    spawnedBy: request.spawnedBy,
    askerDepth: setting(env, 'AGENT_BUS_SPAWN_DEPTH'),
    maxDepth: setting(env, 'AGENT_BUS_MAX_SPAWN_DEPTH'),
    logPathFor: (name, spawnId) => logPathFor(busFolder, name, spawnId),
    restartPolicy: request.restartPolicy ?? null,
    ...(request.maxRestarts === undefined ? {} : { maxRestarts: request.maxRestarts }),
    worktree: request.worktree ?? false,
    tmux: request.tmux ?? false,
  });
  return launch(context, spawn, request.task, 'spawn');
}

/** Resume an agent that has ended, on its own session: the same name, folder and task, a new prompt. */
export async function resumeAgent(context: StartContext, previous: SpawnRecord, prompt: string, spawnedBy: string): Promise<SpawnRecord> {
  const spawn = await context.bus.fleet.resume(previous, { prompt, spawnedBy, machine: hostname(), logPathFor: (name, spawnId) => logPathFor(context.busFolder, name, spawnId) });
  return launch(context, spawn, null, 'resume');
}

/**
 * Start a kept request's supervisor, detached; the spawn as it then stands (running, queued, or
 * ended already). A missing executable, or a task it cannot take, is its exit record and the error.
 */
async function launch(context: StartContext, spawn: SpawnRecord, task: TaskView | null, what: 'spawn' | 'resume'): Promise<SpawnRecord> {
  const { bus, env, busFolder } = context;
  const client = clientOf(spawn.client);
  const refuse = async (note: string, error: BusError): Promise<never> => {
    logNote(spawn.logPath, busFolder, `could not start: ${note}`);
    await bus.fleet.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'start-failed', exitNote: note });
    throw error;
  };
  const wanted = executableOf(client, env);
  if (findExecutable(wanted, env.PATH, spawn.folder) === null) {
    const note = `no executable ${quoted(wanted)} on PATH (${env.PATH ?? ''})`;
    await refuse(note, new BusError(`${what}: cannot start ${client}: ${note}; its log is ${spawn.logPath}`));
  }
  if (spawn.tmux !== null && findExecutable('tmux', env.PATH, spawn.folder) === null) {
    const note = noTmux(env);
    await refuse(note, new BusError(`${what}: cannot start ${client} in tmux: ${note}; its log is ${spawn.logPath}`));
  }
  if (task !== null) {
    try {
      await bus.tasks.take(task.id, spawn.name, false);
    } catch (error) {
      const note = `it could not take task ${shortId(task.id)}: ${(error as Error).message}`;
      await refuse(note, error instanceof BusError ? error : new SpawnRefusedError(note));
    }
  }
  // A machine at its limit queues it: said at once, rather than after a wait for a start that is not coming.
  const running = (await bus.fleet.list()).filter((other) => other.machine === spawn.machine && other.state === 'running').length;
  const max = setting(env, 'AGENT_BUS_MAX_SPAWNED');
  const queued = running >= max;
  // The supervisor's name is known before it runs (this machine, its pid, a word given it), so the slot
  // can be taken in its name here and the client started at once, while the supervisor starts up.
  const word = randomBytes(4).toString('hex');
  const supervisor = startProcess(context.cli.node, [context.cli.script, 'supervise', spawn.spawnId, '--handover', word], { detached: true, stdio: 'ignore', env: env as NodeJS.ProcessEnv, cwd: spawn.folder });
  supervisor.on('error', () => undefined);
  supervisor.unref();
  // (An agent in tmux is started by its supervisor, which opens its window and watches its pane.)
  if (!queued && spawn.tmux === null && supervisor.pid !== undefined && (await bus.fleet.claimSlot(spawn.spawnId, `${hostname()}/${supervisor.pid}/${word}`, max))) {
    const started = await startSpawnClient(env, busFolder, spawn);
    if ('problem' in started) {
      await refuse(started.problem, new BusError(`${what}: cannot start ${client}: ${started.problem}; its log is ${spawn.logPath}`));
    } else {
      await bus.fleet.started(spawn, started.pid);
      return (await bus.fleet.byId(spawn.spawnId)) ?? spawn;
    }
  }
  return queued ? spawn : settled(bus, spawn.spawnId, 3_000);
}
