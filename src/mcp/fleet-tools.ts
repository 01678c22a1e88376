/**
 * The tools of the fleet: spawn_agent, stop_agent and agent_logs, so an agent can start helpers of any
 * client, read their output and end them. On a session's own server they act on this machine; over the
 * hub they are refused, as the hub never starts a process for a request (a runner on the agent's
 * machine will).
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { gitRoot, repoName } from '../adapters/identity.js';
import { spawnView } from '../core/fleet-ops.js';
import { lastLines } from '../fleet/logs.js';
import { startAgent, taskPrompt } from '../fleet/start.js';
import { stopAgent } from '../fleet/stop.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import type { ToolKit } from './tool-kit.js';

const OVER_THE_HUB = 'spawning over the hub needs a runner on the machine that is to run the agent, which this bus does not have yet: spawn on your own machine';

export function fleetTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText, limitArg, limitOf, env } = kit;
  const here = (): NonNullable<typeof kit.fleet> => {
    if (!kit.fleet) throw new BusError(OVER_THE_HUB);
    return kit.fleet;
  };
  tool(
    'spawn_agent',
    {
      description:
        "Start another coding agent headless on this machine: client is claude, codex, opencode, gemini or copilot; it works in repo (a folder; default yours; worktree: its own git worktree on a new branch) on prompt, or holds task (an id) and closes it, its result coming back to the task's creator. Returns its address (<repo>/<client>-<label>) at once; read its output with agent_logs, end it with stop_agent.",
      inputSchema: { client: z.string().min(1), prompt: optionalText(), repo: optionalText(), label: optionalText(), task: optionalText(), model: optionalText(), worktree: z.boolean().nullish() },
    },
    async ({ client, prompt, repo, label, task, model, worktree }) => {
      const fleet = here();
      if (!prompt?.trim() && !task?.trim()) throw new InvalidInputError('spawn_agent: give the agent a prompt, or a task to hold');
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
    { description: 'End an agent spawned on this machine (by its address): a polite signal, then a kill after a grace period. Returns its exit record.', inputSchema: { name: z.string().min(1) } },
    async ({ name }) => {
      here();
      return spawnView(await stopAgent(bus, env, name, session.name));
    },
  );
  tool(
    'agent_logs',
    { description: "The last lines of a spawned agent's output (default 50), and whether it still runs.", inputSchema: { name: z.string().min(1), lines: limitArg() } },
    async ({ name, lines }) => {
      here();
      const spawn = await bus.fleet.find(name);
      return { name: spawn.name, state: spawn.state, lines: lastLines(spawn.logPath, limitOf(lines, 50)) };
    },
  );
}
