/** `agent-bus runner`: offer this machine to the hub and start the agents asked of it here, until stopped (fleet/runner.ts). */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { hubAccess, type HubAccess } from '../../adapters/hub-access.js';
import { gitRoot, repoName } from '../../adapters/identity.js';
import { busPaths } from '../../adapters/paths.js';
import { SPAWNABLE_CLIENTS } from '../../core/fleet-ops.js';
import { findExecutable } from '../../fleet/executable.js';
import { executableOf } from '../../fleet/launch.js';
import { runRunner } from '../../fleet/runner.js';
import { BusError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';
import type { RunnerRepo } from '../../model/records.js';
import { setting } from '../../model/settings.js';
import { HUB_PATHS, SPEAKER_HEADER } from '../../protocol/hub.js';
import { hubRequest } from '../../remote/http.js';
import { UsageError } from '../args.js';
import { positiveInt } from '../context.js';
import type { CommandRunner } from '../spec.js';

const MACHINE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const listOf = (value: unknown): string[] | null => (typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter((item) => item !== '') : null);

/**
 * The agents it offers that its token does not speak for, said in a line: an agent started here speaks
 * on the hub with the machine's token, as a session of the token's client address, so only agents of
 * that address (`shop/claude-<label>` for a token of `shop/claude`) speak as their own names and can
 * close the tasks they hold. Null when all can, or when the hub does not say (the runner goes on).
 */
async function notSpokenFor(access: HubAccess, clients: string[], repos: RunnerRepo[]): Promise<string | null> {
  let agent: unknown;
  try {
    // A hub slow to answer delays the runner's first offer by this much at most.
    agent = (await hubRequest(access, 'POST', HUB_PATHS.mcp, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, 5_000)).headers[SPEAKER_HEADER];
  } catch {
    return null;
  }
  if (typeof agent !== 'string' || agent === '') return null;
  const others = repos.flatMap((repo) => clients.map((client) => `${repo.repo}/${client}`)).filter((address) => address !== agent);
  if (others.length === 0) return null;
  return (
    `its token speaks for ${agent}: agents of ${others.join(', ')} started here would speak on the hub as ${agent}, not as their own names, and could not close the tasks they hold; ` +
    `offer each from a runner whose token is its own (agent-bus token create ${others[0] as string} --scope spawn), under another --name`
  );
}

export const run: CommandRunner = async (args, io) => {
  const access = hubAccess(io.env);
  if (access === null) throw new BusError("runner: this machine uses no hub: 'agent-bus login URL' (with a token of the spawn scope) sets one");
  const machine = typeof args.values.name === 'string' ? args.values.name.trim() : hostname();
  if (!MACHINE.test(machine)) throw new UsageError(`runner: --name: ${quoted(machine)} is no machine's name (letters, digits, '.', '_' and '-')`);
  const given = listOf(args.values.clients);
  for (const client of given ?? []) {
    if (!(SPAWNABLE_CLIENTS as readonly string[]).includes(client)) throw new UsageError(`runner: --clients: ${quoted(client)} is no client the bus can start: ${SPAWNABLE_CLIENTS.join(', ')}`);
  }
  const clients = given ?? SPAWNABLE_CLIENTS.filter((client) => findExecutable(executableOf(client, io.env), io.env.PATH, io.cwd) !== null);
  if (clients.length === 0) throw new BusError(`runner: none of ${SPAWNABLE_CLIENTS.join(', ')} is on PATH (${io.env.PATH ?? ''}): install one, or name them with --clients`);
  const repos: RunnerRepo[] = [];
  for (const path of listOf(args.values.repos) ?? [io.cwd]) {
    const root = gitRoot(resolve(io.cwd, path));
    if (root === null) throw new UsageError(`runner: --repos: ${quoted(path)} is in no git repo`);
    if (!repos.some((repo) => repo.folder === root)) repos.push({ repo: repoName(root), folder: root });
  }
  const max = args.values.max === undefined ? setting(io.env, 'AGENT_BUS_MAX_SPAWNED') : positiveInt(args.values.max, 'max', 4, 64);

  let stopped = false;
  let wake: (() => void) | null = null;
  const stop = (): void => {
    stopped = true;
    wake?.();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, stop);
  // Asked before it says it offers the machine, which it does at once after.
  const strangers = await notSpokenFor(access, clients, repos);
  io.stderr.write(`runner: offering ${machine} to ${access.url}: ${clients.join(', ')} in ${repos.map((repo) => `${repo.repo} (${repo.folder})`).join(', ')}, at most ${max} at once; Ctrl-C ends it (its agents run on)\n`);
  const say = (line: string): void => {
    try {
      io.stderr.write(`runner: ${line}\n`);
    } catch {
      // Nobody reads it any more: the runner goes on.
    }
  };
  if (strangers !== null) say(strangers);
  const running = runRunner({ access, env: io.env, busFolder: busPaths(io.env).folder, machine, clients, repos, max, stopped: () => stopped, say });
  // A stop ends the wait for the bus to move at once; the supervisors it holds end with the process, their agents run on.
  await Promise.race([running, new Promise<void>((resolve) => (wake = resolve))]);
  say(`stopped: ${machine} is no longer offered; its agents run on until a runner of it returns`);
  // Its supervisors still hold their agents' processes: the runner ends without them, and they run on.
  process.exit(0);
};
