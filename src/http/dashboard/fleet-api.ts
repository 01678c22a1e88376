/**
 * The dashboard's fleet: the agents the bus started and how each stands, a log's last lines, and
 * spawn, stop and a task run with a client, as the signed-in person, with what `agent-bus spawn`,
 * `stop`, `logs` and `task add --run` check and say. Starting and ending processes and reading their
 * logs is this machine's: `agent-bus web` hands the dashboard its fleet. The hub hands none (a hub
 * never starts a process for a request, and a log is a file on its agent's machine), so there the
 * fleet is listed and the rest refused in one line, as the hub's MCP tools refuse it.
 */
import { isAbsolute } from 'node:path';
import { gitRoot, repoName } from '../../adapters/identity.js';
import { supervisorGone } from '../../adapters/procs.js';
import { bodyPreview } from '../../audit/record.js';
import type { Bus } from '../../core/bus.js';
import { exitText, type SpawnView } from '../../core/fleet-ops.js';
import { agentLogLines, askToStop } from '../../fleet/on-runner.js';
import type { TaskView } from '../../core/task-ops.js';
import { nowStamp } from '../../model/clock.js';
import { BusError, InvalidInputError, NotFoundError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';
import type { Registration, SpawnRecord } from '../../model/records.js';
import type { ApiContext } from './api.js';
import { flag, text, whole, type Body, type Query } from './input.js';

/** What the dashboard does with this machine's fleet, as the CLI's spawn, stop, logs and task add --run do it. */
export interface DashboardFleet {
  /** Start an agent in the repo at `folder` (its root), queued or running, or its record when it could not start. */
  spawn(request: { client: string; repo: string; folder: string; prompt: string; label: string | null; model: string | null; yolo: boolean; worktree: boolean; spawnedBy: string }): Promise<SpawnRecord>;
  /** Stop it as `actor`: its exit record once it is there. */
  stop(spawnId: string, actor: string): Promise<SpawnRecord>;
  /** The last `count` lines of its log. */
  lastLines(spawn: SpawnRecord, count: number): string[];
  /** Make the task as `as`, and spawn an agent of `client` to hold it in the folder the bus knows for its repo. */
  runTask(request: { client: string; title: string; to: string; body: string | null; as: string; register: Registration[] }): Promise<{ task: TaskView; spawned: SpawnView }>;
}

/** Agents that have ended the view lists at most, newest first; every running and queued one is listed. */
const ENDED_SHOWN = 30;
const LOG_LINES = 50;
const MOST_LOG_LINES = 500;

/** A spawned agent as the fleet view shows it: its record, with the start of its prompt and its task's title. */
export interface FleetAgent extends SpawnView {
  prompt: string;
  task_title: string | null;
}

/** `/api/fleet`: the latest run of every name the bus spawned, and the repo folders it knows (what the spawn form offers). */
export interface FleetPage {
  now: string;
  agents: FleetAgent[];
  /** Agents that ended and are not listed (older than the last ENDED_SHOWN). */
  ended_more: number;
  repos: Array<{ repo: string; folder: string }>;
}

/** This machine's fleet, or one line saying why there is none here (the hub's dashboard) and where it is done instead. */
function here(fleet: DashboardFleet | null, what: string, instead: string): DashboardFleet {
  if (fleet === null) throw new BusError(`${what}: this is the hub's dashboard, and the hub starts and ends no process for a request: ${instead}`);
  return fleet;
}

/** Spawned agents as the fleet view shows them, each marked with its machine's runner where it has one (away: unknown). */
async function fleetAgents(bus: Bus, spawns: SpawnRecord[], titles: ReadonlyMap<string, string> = new Map()): Promise<FleetAgent[]> {
  const views = await bus.fleet.views(spawns, supervisorGone);
  return spawns.map((spawn, index) => ({ ...(views[index] as SpawnView), prompt: bodyPreview(spawn.prompt), task_title: spawn.taskId === null ? null : (titles.get(spawn.taskId) ?? null) }));
}

async function fleetAgent(bus: Bus, spawn: SpawnRecord): Promise<FleetAgent> {
  return (await fleetAgents(bus, [spawn]))[0] as FleetAgent;
}

/**
 * On the hub, an agent a runner runs: its log as the runner sent it, and a stop the runner does, for a
 * token of the spawn scope. Null where this is not the hub's dashboard or the agent has no runner.
 */
async function underRunner(bus: Bus, actor: ApiContext['actor'], spawn: SpawnRecord, what: string): Promise<boolean> {
  if (actor.place !== 'hub' || !(await bus.fleet.runners()).some((runner) => runner.machine === spawn.machine)) return false;
  if (!actor.mayStart) throw new BusError(`${what}: ${spawn.name} runs under a runner, and this token has no spawn scope: sign in with one made by 'agent-bus token create NAME --scope spawn'`);
  return true;
}

/** Running and queued first (oldest first: who has run longest), then those that ended, newest first. */
function inViewOrder(spawns: SpawnRecord[]): { shown: SpawnRecord[]; endedMore: number } {
  const live = spawns.filter((spawn) => spawn.state !== 'exited').sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const ended = spawns.filter((spawn) => spawn.state === 'exited').sort((a, b) => (b.endedAt ?? b.createdAt).localeCompare(a.endedAt ?? a.createdAt));
  return { shown: [...live, ...ended.slice(0, ENDED_SHOWN)], endedMore: Math.max(0, ended.length - ENDED_SHOWN) };
}

async function taskTitles(bus: Bus, spawns: SpawnRecord[]): Promise<Map<string, string>> {
  const ids = [...new Set(spawns.flatMap((spawn) => (spawn.taskId === null ? [] : [spawn.taskId])))];
  const tasks = await Promise.all(ids.map((id) => bus.tasks.get(id).catch(() => null)));
  return new Map(tasks.flatMap((task) => (task === null ? [] : [[task.id, task.title] as [string, string]])));
}

async function spawnById(bus: Bus, id: string): Promise<SpawnRecord> {
  const spawn = await bus.fleet.byId(id);
  if (spawn === null) throw new NotFoundError(`no spawned agent ${quoted(id)} ('agent-bus agents' lists them)`);
  return spawn;
}

export const FLEET_GET_ROUTES: Record<string, (context: ApiContext, query: Query) => Promise<unknown>> = {
  '/api/fleet': async ({ bus, agents }): Promise<FleetPage> => {
    const latest = new Map<string, SpawnRecord>();
    for (const spawn of await bus.fleet.list()) latest.set(spawn.name, spawn);
    const { shown, endedMore } = inViewOrder([...latest.values()]);
    const titles = await taskTitles(bus, shown);
    const repos = new Map<string, string>();
    for (const agent of await agents()) if (agent.repo_path !== '' && !repos.has(agent.repo_path)) repos.set(agent.repo_path, agent.group);
    return {
      now: nowStamp(),
      agents: await fleetAgents(bus, shown, titles),
      ended_more: endedMore,
      repos: [...repos].map(([folder, repo]) => ({ repo, folder })).sort((a, b) => a.repo.localeCompare(b.repo) || a.folder.localeCompare(b.folder)),
    };
  },
  // Never a shared view: a log grows with no change to the store, so each read reads it anew.
  '/api/fleet/log': async ({ bus, fleet, actor }, query) => {
    const id = query.get('spawn_id') ?? '';
    if (id === '') throw new InvalidInputError('spawn_id is required: the spawned agent whose log to show');
    const spawn = await spawnById(bus, id);
    const count = Math.max(1, whole(query, 'lines', LOG_LINES, MOST_LOG_LINES));
    if (await underRunner(bus, actor, spawn, 'logs')) return { spawn_id: spawn.spawnId, name: spawn.name, state: (await fleetAgent(bus, spawn)).state, lines: await agentLogLines(bus, spawn, count) };
    const logs = here(fleet, 'logs', "read it on the machine it ran on ('agent-bus logs NAME' there)");
    return { spawn_id: spawn.spawnId, name: spawn.name, state: spawn.state, lines: logs.lastLines(spawn, count) };
  },
};

export const FLEET_POST_ROUTES: Record<string, (context: ApiContext, body: Body) => Promise<unknown>> = {
  // As `agent-bus spawn CLIENT --repo FOLDER`, spawned by the one signed in: the audit's request row is theirs.
  '/api/fleet/spawn': async ({ bus, fleet, actor }, body) => {
    const starter = here(fleet, 'spawn', "spawn on the machine that is to run the agent ('agent-bus spawn', or 'agent-bus web' there)");
    const client = text(body, 'client', true) as string;
    const folder = (text(body, 'folder', true) as string).trim();
    const prompt = text(body, 'prompt', true) as string;
    if (prompt.trim() === '') throw new InvalidInputError('prompt is required');
    // The dashboard has no folder of its own that a relative path could be taken from.
    if (!isAbsolute(folder)) throw new InvalidInputError(`folder must be a repo's full path, got ${quoted(folder)}`);
    const root = gitRoot(folder);
    if (root === null) throw new BusError(`spawn: ${quoted(folder)} is in no git repo: give the folder of a repo`);
    // The one who asks is on the roster, so what the fleet tells them (a restart given up) reaches them.
    await bus.roster.register(actor.registrations);
    const spawn = await starter.spawn({
      client,
      repo: repoName(root),
      folder: root,
      prompt,
      label: text(body, 'label')?.trim() || null,
      model: text(body, 'model')?.trim() || null,
      yolo: flag(body, 'yolo'),
      worktree: flag(body, 'worktree'),
      spawnedBy: actor.name,
    });
    // A start that failed is a failure, as `agent-bus spawn` says it; one that ran and ended already is its record.
    if (spawn.state === 'exited' && spawn.exitCategory === 'start-failed') throw new BusError(`spawn: ${spawn.name} could not start: ${spawn.exitNote ?? exitText(spawn)}; its log is ${spawn.logPath}`);
    return fleetAgent(bus, spawn);
  },
  '/api/fleet/stop': async ({ bus, fleet, actor }, body) => {
    const spawn = await spawnById(bus, text(body, 'spawn_id', true) as string);
    // Under a runner the stop is asked, and the runner ends it within its heartbeat.
    if (await underRunner(bus, actor, spawn, 'stop')) return fleetAgent(bus, await askToStop(bus, spawn.spawnId, actor.name));
    const stopper = here(fleet, 'stop', "stop it on the machine it runs on ('agent-bus stop NAME' there)");
    return fleetAgent(bus, await stopper.stop(spawn.spawnId, actor.name));
  },
  // As `agent-bus task add TITLE --to REPO --run CLIENT`: the task made by the one signed in, and an agent spawned to hold it.
  '/api/tasks/run': async ({ fleet, actor }, body) => {
    const runner = here(fleet, 'task add --run', "make the task here, and run it on the machine that is to run the agent ('agent-bus task add … --run CLIENT' there)");
    return runner.runTask({ client: text(body, 'client', true) as string, title: text(body, 'title', true) as string, to: text(body, 'to', true) as string, body: text(body, 'body'), as: actor.name, register: actor.registrations });
  },
};
