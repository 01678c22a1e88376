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
import { exitText, spawnView, type SpawnView } from '../../core/fleet-ops.js';
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

function fleetAgent(spawn: SpawnRecord, titles: ReadonlyMap<string, string> = new Map()): FleetAgent {
  return { ...spawnView(spawn, supervisorGone), prompt: bodyPreview(spawn.prompt), task_title: spawn.taskId === null ? null : (titles.get(spawn.taskId) ?? null) };
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
      agents: shown.map((spawn) => fleetAgent(spawn, titles)),
      ended_more: endedMore,
      repos: [...repos].map(([folder, repo]) => ({ repo, folder })).sort((a, b) => a.repo.localeCompare(b.repo) || a.folder.localeCompare(b.folder)),
    };
  },
  // Never a shared view: a log grows with no change to the store, so each read reads it anew.
  '/api/fleet/log': async ({ bus, fleet }, query) => {
    const logs = here(fleet, 'logs', "read it on the machine it ran on ('agent-bus logs NAME' there)");
    const id = query.get('spawn_id') ?? '';
    if (id === '') throw new InvalidInputError('spawn_id is required: the spawned agent whose log to show');
    const spawn = await spawnById(bus, id);
    return { spawn_id: spawn.spawnId, name: spawn.name, state: spawn.state, lines: logs.lastLines(spawn, Math.max(1, whole(query, 'lines', LOG_LINES, MOST_LOG_LINES))) };
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
    return fleetAgent(spawn);
  },
  '/api/fleet/stop': async ({ bus, fleet, actor }, body) => {
    const stopper = here(fleet, 'stop', "stop it on the machine it runs on ('agent-bus stop NAME' there)");
    const spawn = await spawnById(bus, text(body, 'spawn_id', true) as string);
    return fleetAgent(await stopper.stop(spawn.spawnId, actor.name));
  },
  // As `agent-bus task add TITLE --to REPO --run CLIENT`: the task made by the one signed in, and an agent spawned to hold it.
  '/api/tasks/run': async ({ fleet, actor }, body) => {
    const runner = here(fleet, 'task add --run', "make the task here, and run it on the machine that is to run the agent ('agent-bus task add … --run CLIENT' there)");
    return runner.runTask({ client: text(body, 'client', true) as string, title: text(body, 'title', true) as string, to: text(body, 'to', true) as string, body: text(body, 'body'), as: actor.name, register: actor.registrations });
  },
};
