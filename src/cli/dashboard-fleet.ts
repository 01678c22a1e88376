/**
 * This machine's fleet as `agent-bus web` hands it to the dashboard: spawn, stop, a log's last
 * lines and a task run with a client, each the very code of `agent-bus spawn`, `stop`, `logs` and
 * `task add --run`. The supervisor it starts is this process's own CLI, as `spawn` starts it.
 */
import { busPaths } from '../adapters/paths.js';
import type { Bus } from '../core/bus.js';
import { lastLines } from '../fleet/logs.js';
import { startAgent, type StartContext } from '../fleet/start.js';
import { stopAgent } from '../fleet/stop.js';
import type { Registration, SpawnRecord } from '../model/records.js';
import type { Env } from '../model/settings.js';
import { addTaskAndRun } from './task-run.js';

export function localFleet(bus: Bus, env: Env) {
  const context: StartContext = { bus, env, busFolder: busPaths(env).folder, cli: { node: process.execPath, script: process.argv[1] as string } };
  return {
    spawn(request: { client: string; repo: string; folder: string; prompt: string; label: string | null; model: string | null; yolo: boolean; worktree: boolean; spawnedBy: string }) {
      return startAgent(context, { ...request, task: null });
    },
    stop(spawnId: string, actor: string) {
      return stopAgent(bus, env, spawnId, actor);
    },
    lastLines(spawn: SpawnRecord, count: number) {
      return lastLines(spawn.logPath, count);
    },
    runTask(request: { client: string; title: string; to: string; body: string | null; as: string; register: Registration[] }) {
      // The folder is the one the bus knows for the task's repo: no working folder stands in for it.
      return addTaskAndRun(bus, { ...request, after: [], repoPath: null, label: null, yolo: false }, env, '/');
    },
  };
}
