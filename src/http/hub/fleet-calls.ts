/**
 * The fleet's calls at the hub (`/v1/call`): what `spawn --on`, `stop`, `resume` and `logs` ask
 * from another machine, and what a runner reports of the agents it runs. Starting, stopping or
 * running agents takes a token with the `spawn` scope; a runner reports only on the machines its
 * token's agent offered. The hub itself starts no process.
 */
import { runnerAway, SPAWNABLE_CLIENTS, type SpawnView } from '../../core/fleet-ops.js';
import { BUS_NAME } from '../../core/names.js';
import { logPathFor } from '../../fleet/logs.js';
import { failOpenTask } from '../../fleet/task-close.js';
import { hasScope } from '../../core/tokens.js';
import { agentLogLines, askToStop, fleetViews, resumeOnRunner, runnersSpawn, spawnOnRunner } from '../../fleet/on-runner.js';
import { InvalidInputError } from '../../model/errors.js';
import type { ExitCategory, RunnerRepo, SpawnRecord, TokenRecord } from '../../model/records.js';
import type { Bus } from '../../core/bus.js';
import { quoted } from '../../model/quote.js';
import { ForbiddenError } from '../errors.js';
import { optionalText } from './request-args.js';
import type { CallContext, Operation } from './call-endpoint.js';
import type { CallName, FleetSpawnArgs, RunnerOffer } from '../../protocol/hub.js';

type Args = Record<string, unknown>;

type FleetCall = Extract<CallName, `fleet.${string}` | `runner.${string}`>;

const MACHINE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const EXIT_CATEGORIES: readonly ExitCategory[] = ['finished', 'failed', 'signal', 'oom', 'stopped', 'start-failed'];
/** What a runner may say of its agents' logs at once. */
const MOST_LOG_CHARS = 64 * 1024;

/** A token that may start and stop agents: the `spawn` scope. */
function mayStart(token: TokenRecord, what: string): void {
  if (!hasScope(token, 'spawn')) {
    throw new ForbiddenError(`${what} takes a token with the spawn scope, and this one (${token.agent}) has none: make one on the hub's machine with 'agent-bus token create NAME --scope spawn'`);
  }
}

function required(args: Args, key: string, max: number): string {
  const value = optionalText(args[key], key, max);
  if (value === null) throw new InvalidInputError(`${key} is required`);
  return value;
}

function whole(args: Args, key: string, min: number, max: number): number {
  const value = args[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new InvalidInputError(`${key} must be a whole number from ${min} to ${max}`);
  return value;
}

/** The agents of a machine that have not ended: queued ones to start, running ones to watch. */
async function workOf(bus: Bus, machine: string): Promise<SpawnRecord[]> {
  return (await bus.fleet.list()).filter((spawn) => spawn.machine === machine && spawn.state !== 'exited');
}

async function oneView(bus: Bus, spawn: SpawnRecord): Promise<SpawnView> {
  return (await fleetViews(bus, [spawn]))[0] as SpawnView;
}

function spawnArgs(args: Args): FleetSpawnArgs {
  const restart = optionalText(args.restart, 'restart', 20);
  if (restart !== null && restart !== 'on-failure') throw new InvalidInputError('restart must be on-failure');
  const machine = optionalText(args.machine, 'machine', 100);
  if (machine !== null && !MACHINE.test(machine)) throw new InvalidInputError(`machine: ${quoted(machine)} is no machine's name`);
  return {
    client: required(args, 'client', 40),
    machine,
    repo: required(args, 'repo', 200),
    prompt: optionalText(args.prompt, 'prompt', 100_000),
    label: optionalText(args.label, 'label', 100),
    model: optionalText(args.model, 'model', 200),
    yolo: args.yolo === true,
    task: optionalText(args.task, 'task', 100),
    restart,
    max_restarts: args.max_restarts === undefined || args.max_restarts === null ? null : whole(args, 'max_restarts', 1, 100),
    worktree: args.worktree === true,
  };
}

function offerArgs(args: Args): RunnerOffer {
  const machine = required(args, 'machine', 100);
  if (!MACHINE.test(machine)) throw new InvalidInputError(`machine: ${quoted(machine)} is no machine's name`);
  const clients = Array.isArray(args.clients) ? args.clients : [];
  if (clients.length === 0 || clients.some((client) => !(SPAWNABLE_CLIENTS as readonly unknown[]).includes(client))) {
    throw new InvalidInputError(`clients must be one or more of ${SPAWNABLE_CLIENTS.join(', ')}`);
  }
  const repos = Array.isArray(args.repos) ? args.repos : [];
  if (repos.length === 0 || repos.length > 200) throw new InvalidInputError('repos must list 1 to 200 repos, each {repo, folder}');
  for (const repo of repos as Array<{ repo?: unknown; folder?: unknown }>) {
    if (typeof repo?.repo !== 'string' || repo.repo === '' || repo.repo.length > 200 || typeof repo.folder !== 'string' || !repo.folder.startsWith('/') || repo.folder.length > 4096) {
      throw new InvalidInputError('repos: each must be {repo: its name, folder: an absolute path}');
    }
  }
  const busFolder = required(args, 'bus_folder', 4096);
  if (!busFolder.startsWith('/')) throw new InvalidInputError('bus_folder must be an absolute path');
  return { machine, clients: clients as string[], repos: repos as RunnerRepo[], max: whole(args, 'max', 1, 64), bus_folder: busFolder, heartbeat_ms: whole(args, 'heartbeat_ms', 100, 600_000), started_at: required(args, 'started_at', 40) };
}

/** A call a runner makes about one of its agents: the spawn, checked to be on a machine it offers. */
function aboutItsAgent<K extends FleetCall>(parse: (args: Args) => Record<string, unknown>, run: (context: CallContext, spawn: SpawnRecord, args: Args) => Promise<unknown>): Operation<K> {
  return {
    parse: (args) => ({ spawn_id: required(args, 'spawn_id', 100), ...parse(args) }) as never,
    run: async (context, args) => {
      mayStart(context.token, 'a runner');
      const given = args as unknown as Args;
      const spawn = await runnersSpawn(context.bus, context.token.agent, given.spawn_id as string);
      return run(context, spawn, given) as never;
    },
  };
}

export const FLEET_OPS = {
  'fleet.spawn': {
    parse: spawnArgs,
    run: async ({ bus, env, token }, request) => {
      mayStart(token, 'spawning an agent');
      const spawn = await spawnOnRunner(bus, env, {
        client: request.client,
        machine: request.machine,
        repo: request.repo,
        prompt: request.prompt,
        label: request.label,
        model: request.model,
        yolo: request.yolo,
        taskId: request.task,
        // Whoever asks is the token's agent, whatever the request says.
        spawnedBy: token.agent,
        restartPolicy: request.restart,
        maxRestarts: request.max_restarts,
        worktree: request.worktree,
      });
      return oneView(bus, spawn);
    },
  } satisfies Operation<'fleet.spawn'>,
  'fleet.stop': {
    parse: (args) => ({ name: required(args, 'name', 200) }),
    run: async ({ bus, token }, { name }) => {
      mayStart(token, 'stopping an agent');
      return oneView(bus, await askToStop(bus, name, token.agent));
    },
  } satisfies Operation<'fleet.stop'>,
  'fleet.resume': {
    parse: (args) => ({ name: required(args, 'name', 200), prompt: optionalText(args.prompt, 'prompt', 100_000) }),
    run: async ({ bus, token }, { name, prompt }) => {
      mayStart(token, 'resuming an agent');
      const previous = await bus.fleet.find(name);
      return oneView(bus, await resumeOnRunner(bus, previous, prompt ?? 'Go on with your work from where you left it.', token.agent));
    },
  } satisfies Operation<'fleet.resume'>,
  'fleet.find': {
    parse: (args) => ({ name: required(args, 'name', 200) }),
    run: async ({ bus }, { name }) => oneView(bus, await bus.fleet.find(name)),
  } satisfies Operation<'fleet.find'>,
  'fleet.list': { parse: () => ({}), run: async ({ bus }) => fleetViews(bus, await bus.fleet.latest()) } satisfies Operation<'fleet.list'>,
  'fleet.logs': {
    parse: (args) => ({ name: required(args, 'name', 200), lines: whole(args, 'lines', 0, 10_000) }),
    run: async ({ bus, token }, { name, lines }) => {
      // An agent's output can hold what it read: the scope that starts agents reads them.
      mayStart(token, "reading an agent's log");
      const spawn = await bus.fleet.find(name);
      const view = await oneView(bus, spawn);
      return { name: spawn.name, state: view.state, lines: await agentLogLines(bus, spawn, lines) };
    },
  } satisfies Operation<'fleet.logs'>,
  'runner.offer': {
    parse: offerArgs,
    run: async ({ bus, token }, offer) => {
      mayStart(token, 'a runner');
      const now = bus.clock.nowMicros() / 1000;
      const held = (await bus.fleet.runners()).find((runner) => runner.machine === offer.machine);
      if (held !== undefined && held.agent !== token.agent && !runnerAway(held, now)) {
        throw new ForbiddenError(`a runner of ${held.agent} offers ${offer.machine}, and is present: one runner per machine`);
      }
      await bus.fleet.offerRunner({ machine: offer.machine, agent: token.agent, clients: offer.clients, repos: offer.repos, maxSpawned: offer.max, busFolder: offer.bus_folder, heartbeatMs: offer.heartbeat_ms, startedAt: offer.started_at });
      return { work: await workOf(bus, offer.machine) };
    },
  } satisfies Operation<'runner.offer'>,
  'runner.work': {
    parse: (args) => ({ machine: required(args, 'machine', 100) }),
    run: async ({ bus, token }, { machine }) => {
      mayStart(token, 'a runner');
      const runner = (await bus.fleet.runners()).find((candidate) => candidate.machine === machine);
      if (runner?.agent !== token.agent) throw new ForbiddenError(`no runner of ${token.agent} offers ${quoted(machine)}: offer it first (runner.offer)`);
      return { work: await workOf(bus, machine) };
    },
  } satisfies Operation<'runner.work'>,
  'runner.spawn': aboutItsAgent<'runner.spawn'>(() => ({}), async (_context, spawn) => spawn),
  'runner.claim': aboutItsAgent<'runner.claim'>(
    (args) => ({ supervisor: required(args, 'supervisor', 300), max: whole(args, 'max', 1, 64) }),
    ({ bus }, spawn, args) => bus.fleet.claimSlot(spawn.spawnId, args.supervisor as string, args.max as number),
  ),
  'runner.started': aboutItsAgent<'runner.started'>(
    (args) => ({ pid: whole(args, 'pid', 1, 2 ** 31) }),
    async ({ bus }, spawn, args) => {
      await bus.fleet.started(spawn, args.pid as number);
      return true;
    },
  ),
  'runner.exited': aboutItsAgent<'runner.exited'>(
    (args) => {
      const category = args.exit_category as ExitCategory;
      if (!EXIT_CATEGORIES.includes(category)) throw new InvalidInputError(`exit_category must be one of ${EXIT_CATEGORIES.join(', ')}`);
      const code = args.exit_code;
      if (code !== null && code !== undefined && (typeof code !== 'number' || !Number.isInteger(code))) throw new InvalidInputError('exit_code must be a whole number or null');
      return { exit_code: code ?? null, exit_signal: optionalText(args.exit_signal, 'exit_signal', 20), exit_category: category, exit_note: optionalText(args.exit_note, 'exit_note', 2_000) };
    },
    ({ bus }, spawn, args) =>
      bus.fleet.exited(spawn.spawnId, { exitCode: args.exit_code as number | null, exitSignal: args.exit_signal as string | null, exitCategory: args.exit_category as ExitCategory, exitNote: args.exit_note as string | null }),
  ),
  'runner.hooks_session': aboutItsAgent<'runner.hooks_session'>(() => ({}), ({ bus }, spawn) => bus.fleet.hooksSession(spawn)),
  'runner.session': aboutItsAgent<'runner.session'>(
    (args) => ({ session_key: required(args, 'session_key', 200) }),
    async ({ bus }, spawn, args) => {
      await bus.fleet.noteSession(spawn.spawnId, args.session_key as string);
      return true;
    },
  ),
  'runner.fail_task': aboutItsAgent<'runner.fail_task'>(
    (args) => ({ lines: Array.isArray(args.lines) ? args.lines.filter((line): line is string => typeof line === 'string').slice(-20).map((line) => line.slice(0, 2_000)) : [] }),
    async ({ bus }, spawn, args) => {
      await failOpenTask(bus, spawn, args.lines as string[]);
      return true;
    },
  ),
  'runner.restart': aboutItsAgent<'runner.restart'>(
    (args) => ({ prompt: required(args, 'prompt', 100_000) }),
    async ({ bus }, spawn, args) => {
      const runner = (await bus.fleet.runners()).find((candidate) => candidate.machine === spawn.machine);
      return bus.fleet.resume(spawn, { prompt: args.prompt as string, spawnedBy: spawn.spawnedBy, machine: spawn.machine, logPathFor: (name, id) => logPathFor(runner?.busFolder ?? '/', name, id), restart: true });
    },
  ),
  'runner.tell': aboutItsAgent<'runner.tell'>(
    (args) => ({ body: required(args, 'body', 10_000) }),
    async ({ bus }, spawn, args) => {
      await bus.mail.send({ from: BUS_NAME, to: spawn.spawnedBy, urgent: true, body: args.body as string });
      return true;
    },
  ),
  'runner.folder': aboutItsAgent<'runner.folder'>(
    (args) => {
      const folder = required(args, 'folder', 4096);
      if (!folder.startsWith('/')) throw new InvalidInputError('folder must be an absolute path');
      return { folder };
    },
    async ({ bus }, spawn, args) => {
      // Only the worktree of an agent that asked for one, before it has started.
      if (!spawn.worktree || spawn.pid !== null) throw new ForbiddenError(`${spawn.name} has no worktree to make now`);
      await bus.fleet.movedTo(spawn.spawnId, args.folder as string);
      return true;
    },
  ),
  'runner.log': aboutItsAgent<'runner.log'>(
    (args) => ({ tail: optionalText(args.tail, 'tail', MOST_LOG_CHARS) ?? '' }),
    async ({ bus }, spawn, args) => {
      await bus.fleet.noteLog(spawn.spawnId, args.tail as string);
      return true;
    },
  ),
};
