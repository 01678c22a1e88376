/**
 * The tools of the fleet: spawn_agent, stop_agent and agent_logs, so an agent can start helpers of any
 * client, read their output and end them. On a session's own server they act on this machine; over the
 * hub, where the token has the spawn scope, they are asked of a runner, which starts the agent on its
 * machine (the hub never starts a process for a request).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { gitRoot, repoName } from '../adapters/identity.js';
import { spawnView, type SpawnView } from '../core/fleet-ops.js';
import { repoOf } from '../core/names.js';
import { agentLogLines, askToStop, fleetViews, spawnOnRunner } from '../fleet/on-runner.js';
import { startAgent, taskPrompt } from '../fleet/start.js';
import { stopAgent } from '../fleet/stop.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import type { ToolKit } from './tool-kit.js';

const NO_SPAWN_SCOPE = "over the hub, starting and stopping agents takes a token with the spawn scope ('agent-bus token create NAME --scope spawn' on the hub's machine)";

export function fleetTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText, limitArg, limitOf, env } = kit;
  /** Over the hub (no process of this machine is started): the token must have the spawn scope. */
  const overHub = (): boolean => {
    if (kit.fleet) return false;
    if (!kit.mayStart) throw new BusError(NO_SPAWN_SCOPE);
    return true;
  };
  tool(
    'spawn_agent',
    {
      description:
        "Start another coding agent headless: client is claude, codex, opencode, gemini, copilot, pi, qwen or cline; it works in repo (here a folder, default yours; worktree: its own git worktree on a new branch; over a hub, a repo's name, run by the runner of machine) on prompt, or holds task (an id) and closes it, its result coming back to the task's creator. Returns its address (<repo>/<client>-<label>) at once; read its output with agent_logs, end it with stop_agent.",
      inputSchema: { client: z.string().min(1), prompt: optionalText(), repo: optionalText(), label: optionalText(), task: optionalText(), model: optionalText(), worktree: z.boolean().nullish(), machine: optionalText() },
    },
    async ({ client, prompt, repo, label, task, model, worktree, machine }) => {
      if (!prompt?.trim() && !task?.trim()) throw new InvalidInputError('spawn_agent: give the agent a prompt, or a task to hold');
      if (overHub()) {
        const spawn = await spawnOnRunner(bus, env, {
          client,
          machine: machine?.trim() ? machine.trim() : null,
          repo: repo?.trim() ? repo.trim() : repoOf(session.name),
          prompt: prompt ?? null,
          label: label?.trim() ? label : null,
          model: model?.trim() ? model : null,
          yolo: false,
          taskId: task?.trim() ? task.trim() : null,
          spawnedBy: session.name,
          restartPolicy: null,
          maxRestarts: null,
          worktree: worktree === true,
        });
        return (await fleetViews(bus, [spawn]))[0] as SpawnView;
      }
      const fleet = kit.fleet as NonNullable<typeof kit.fleet>;
      if (machine?.trim()) throw new InvalidInputError('spawn_agent: machine is for a bus reached through a hub, whose runners start agents; this one starts them here');
      const start = repo?.trim() ? resolve(session.repoPath, repo) : session.repoPath;
      const root = gitRoot(start);
      if (root === null) throw new BusError(`spawn_agent: ${quoted(start)} is in no git repo`);
      const held = task?.trim() ? await bus.tasks.get(task) : null;
      const spawn = await startAgent(
        { bus, env: env, busFolder: fleet.busFolder, cli: fleet.cli },
        {
          client,
          repo: repoName(root),
          folder: root,
          prompt: held === null ? (prompt as string) : taskPrompt(held, prompt?.trim() ? prompt : null),
          label: label?.trim() ? label : null,
          model: model?.trim() ? model : null,
          yolo: false,
          task: held,
          spawnedBy: session.name,
          worktree: worktree === true,
        },
      );
      return spawnView(spawn);
    },
  );
  tool(
    'stop_agent',
    {
      description: 'End a spawned agent (by its address): a polite signal, then a kill after a grace period. Returns its exit record (over a hub: the stop asked of its runner).',
      inputSchema: { name: z.string().min(1) },
    },
    async ({ name }) => {
      if (overHub()) return (await fleetViews(bus, [await askToStop(bus, name, session.name)]))[0] as SpawnView;
      return spawnView(await stopAgent(bus, env, name, session.name));
    },
  );
  tool(
    'agent_logs',
    { description: "The last lines of a spawned agent's output (default 50), and whether it still runs.", inputSchema: { name: z.string().min(1), lines: limitArg() } },
    async ({ name, lines }) => {
      overHub();
      const spawn = await bus.fleet.find(name);
      const view = (await fleetViews(bus, [spawn]))[0] as SpawnView;
      return { name: spawn.name, state: view.state, lines: await agentLogLines(bus, spawn, limitOf(lines, 50)) };
    },
  );
}
