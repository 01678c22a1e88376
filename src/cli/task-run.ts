/**
 * `task add … --run CLIENT`: the task made, and an agent spawned to hold it, in the repo it is
 * addressed to (the folder the bus knows from init, or --repo PATH). Nobody of that repo need have
 * started a session. On this machine's bus only, for now: the command opens it, or `agent-bus web`
 * runs it for its New task form.
 */
import { resolve } from 'node:path';
import { busPaths } from '../adapters/paths.js';
import { gitRoot, repoName } from '../adapters/identity.js';
import { speakerName } from '../client/speaker.js';
import { spawnView, type SpawnView } from '../core/fleet-ops.js';
import { repoOf } from '../core/names.js';
import type { TaskView } from '../core/task-ops.js';
import { startAgent, taskPrompt } from '../fleet/start.js';
import { BusError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import { shortId } from '../model/short-id.js';
import type { Registration } from '../model/records.js';
import type { Env } from '../model/settings.js';
import type { Bus } from '../core/bus.js';

export interface TaskRunRequest {
  client: string;
  title: string;
  to: string;
  body: string | null;
  after: string[];
  /** --repo: the folder to run in, over the one the bus knows for the task's repo. */
  repoPath: string | null;
  label: string | null;
  yolo: boolean;
  /** Its own git worktree of the repo, on a new branch agent/<label>. */
  worktree?: boolean;
  as: string | null;
  /** The roster rows of the one who asks, written as any task made by them writes them. */
  register?: Registration[];
}

export async function addTaskAndRun(bus: Bus, request: TaskRunRequest, env: Env, cwd: string): Promise<{ task: TaskView; spawned: SpawnView }> {
  const repo = repoOf(request.to.trim());
  let folder: string | null;
  if (request.repoPath !== null) {
    const start = resolve(cwd, request.repoPath);
    folder = gitRoot(start);
    if (folder === null) throw new BusError(`task add --run: ${quoted(start)} is in no git repo: no task was made`);
  } else {
    folder = (await bus.roster.agents()).find((agent) => agent.group === repo && agent.repo_path !== '')?.repo_path ?? null;
    if (folder === null) throw new BusError(`task add --run: the bus knows no folder of repo ${quoted(repo)} (run 'agent-bus init' in it, or give --repo PATH): no task was made`);
  }
  const task = await bus.tasks.create({ title: request.title, to: request.to, body: request.body, after: request.after, creator: request.as ?? speakerName(undefined, env) }, request.register ?? []);
  const spawn = await startAgent(
    { bus, env, busFolder: busPaths(env).folder, cli: { node: process.execPath, script: process.argv[1] as string } },
    { client: request.client, repo: request.repoPath === null ? repo : repoName(folder), folder, prompt: taskPrompt(task, null), label: request.label, model: null, yolo: request.yolo, worktree: request.worktree ?? false, task, spawnedBy: task.creator },
  ).catch((error: unknown) => {
    // The task stands, offered as any task is: the failure says so, with its id.
    throw new BusError(`${(error as Error).message}; task ${shortId(task.id)} was made, and is offered to ${task.to}`);
  });
  return { task: await bus.tasks.get(task.id), spawned: spawnView(spawn) };
}
