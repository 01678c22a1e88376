/** `agent-bus init`: wire repos for the clients asked for, or show the plan; put the repos' addresses on the roster. */
import type { HooksChoice } from '../../clients/hook-entries.js';
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, relative, resolve } from 'node:path';
import { writeAtomic } from '../../clients/config-files.js';
import { planInit, repoChanges, wires, type RepoPlan } from '../../init/plan.js';
import { gitRoot } from '../../adapters/identity.js';
import { guardPlace, installGuard } from '../../init/commit-guard.js';
import { ensureIgnored } from '../../init/git-ignore.js';
import { WIRINGS } from '../../clients/registry/wirings.js';
import { DEFAULT_CLIENT, PROFILES, profileFor } from '../../clients/registry/profiles.js';
import type { Launcher } from '../../clients/wiring.js';
import { clientAddressOf, parseNameLenient } from '../../core/names.js';
import type { Bus } from '../../core/bus.js';
import { openBus } from '../../runtime.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { UsageError } from '../args.js';
import { speakerName } from '../context.js';
import { BusError } from '../../model/errors.js';
import { setting, type Env } from '../../model/settings.js';
import type { CommandRunner } from '../spec.js';
import { errorLine, quoted } from '../../model/quote.js';
import { hubRequest } from '../../remote/http.js';
import { HUB_PATHS, SPEAKER_HEADER } from '../../protocol/hub.js';

/** The command the committed files run. */
const COMMAND = 'agent-bus';

/** Where a command is on PATH, or null. */
export function onPath(command: string, env: Env): string | null {
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

/** The agent-bus a machine-local file runs (the commit guard's git hook): --bin-path, $AGENT_BUS_BIN, the one on PATH (symlinks kept: a pipx-style shim stays stable), or the bare name. */
export function binPath(flag: string | undefined, env: Env): string {
  if (flag) return flag;
  const given = setting(env, 'AGENT_BUS_BIN');
  if (given !== '') return given;
  return onPath(COMMAND, env) ?? COMMAND;
}

/**
 * How the files init writes start agent-bus: the committed files run the bare `agent-bus`; a path
 * given (--bin-path, else $AGENT_BUS_BIN) is this machine's, for the clients' personal files only;
 * a bare name given is the command itself. Given nothing, a personal file keeps what it says.
 */
export function launcherFor(flag: string | undefined, env: Env, cwd: string): Launcher {
  const given = flag ?? (setting(env, 'AGENT_BUS_BIN') || undefined);
  if (given === undefined) return { command: COMMAND, local: 'keep' };
  if (!given.includes('/')) return { command: given, local: null };
  return { command: COMMAND, local: resolve(cwd, given) };
}

/** The clients init wires when none are named: those whose command is on PATH, in the registry's order; Claude Code where none is. */
export function clientsOnPath(env: Env): { clients: string[]; found: boolean } {
  const found = Object.keys(PROFILES).filter((id) => id in WIRINGS && onPath(profileFor(id).command, env) !== null);
  return found.length > 0 ? { clients: found, found: true } : { clients: [DEFAULT_CLIENT], found: false };
}

function parseClients(raw: string): string[] {
  const clients = [...new Set(raw.split(',').map((client) => client.trim()).filter((client) => client !== ''))];
  const known = Object.keys(WIRINGS).sort();
  const unknown = clients.filter((client) => !known.includes(client));
  if (clients.length === 0 || unknown.length > 0) {
    throw new UsageError(`unknown client(s): ${unknown.length > 0 ? unknown.join(', ') : '(none given)'}. init can wire: ${known.join(', ')}`);
  }
  return clients;
}

function shortPath(path: string, home: string): string {
  return home !== '' && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
}

/** A file init writes, under its repo as a relative path; a client's user settings outside it (Cline's MCP servers) from the home folder. */
function shownPath(repo: string, path: string, home: string): string {
  const inside = relative(repo, path);
  return inside.startsWith('..') ? shortPath(path, home) : inside;
}

/** The plan, a repo a block; `chosen` says how the clients were chosen when --clients did not name them. */
function render(plans: RepoPlan[], clients: string[], home: string, chosen: string): string {
  if (plans.length === 0) return '(no repos found)\n';
  const actionWidth = Math.max(...plans.map((plan) => plan.action.length));
  const nameWidth = Math.max(8, ...plans.map((plan) => (plan.name ?? '-').length));
  const lines = plans.flatMap((plan) => {
    const touched = plan.clients.filter((client) => client.action === 'write' || client.action === 'refresh').map((client) => client.client);
    const extra = `${touched.length > 0 ? `   [${touched.join(', ')}]` : ''}${plan.notes.length > 0 ? `   (${plan.notes.join('; ')})` : ''}`;
    const head = `  ${plan.action.padEnd(actionWidth)}  ${(plan.name ?? '-').padEnd(nameWidth)}  ${shortPath(plan.repo, home)}${extra}`;
    // Then each file: what happens to it.
    const what = (before: string | null, after: string): string => (before === null ? 'create' : before === after ? 'unchanged' : 'refresh');
    const files = plan.clients.flatMap((client) =>
      client.files.map((file) => `      ${what(file.before, file.after).padEnd(9)}  ${shownPath(plan.repo, file.path, home)}  (${client.client}${file.personal ? ', personal: not committed' : ''})`),
    );
    const pin = plan.pin === null ? [] : [`      ${what(plan.pin.before, plan.pin.after).padEnd(9)}  ${relative(plan.repo, plan.pin.path)}  (the repo's name)`];
    return [head, ...files, ...pin];
  });
  const count = (action: string): number => plans.filter((plan) => plan.action === action).length;
  const renamed = plans.filter((plan) => plan.previous_name !== null).length;
  lines.push(
    '',
    `${plans.length} repo(s) scanned · clients=${clients.join(',')}${chosen} · write=${count('write')} refresh=${count('refresh')} renamed=${renamed} ` +
      `handwritten-skip=${count('skip-handwritten')} unreadable-skip=${count('skip-unreadable')} ignored=${count('skip-ignored')} not-repo=${count('skip-not-repo')}`,
  );
  return `${lines.join('\n')}\n`;
}

/** The kind of hook asked for (--hooks): command or mcp, else whichever the installed client supports. */
function hooksChoice(given: string | boolean | undefined): HooksChoice {
  if (typeof given !== 'string') return 'auto';
  if (given === 'command' || given === 'mcp') return given;
  throw new UsageError(`--hooks must be command or mcp, got ${quoted(given)}`);
}

/** The hub's URL as init writes it: http or https, no credentials, no trailing slash. */
function remoteUrl(given: string | boolean | undefined): string | null {
  if (typeof given !== 'string') return null;
  let url: URL;
  try {
    url = new URL(given.trim());
  } catch {
    throw new UsageError(`--remote: ${quoted(given)} is not a URL (e.g. https://hub.example:8787)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--remote: ${quoted(given)} is not an http or https URL`);
  if (url.username !== '' || url.password !== '') throw new UsageError('--remote: leave credentials out of the URL; the token comes from $AGENT_BUS_TOKEN');
  return given.trim().replace(/\/+$/, '');
}

/** Install the commit guard in one repo, saying what happened; false when it could not be. */
function guardRepo(repo: string, bin: string, io: { stdout: { write(text: string): unknown }; stderr: { write(text: string): unknown } }): boolean {
  try {
    const place = guardPlace(repo);
    io.stdout.write(`commit guard: ${place.hook}: ${installGuard(place, bin)}\n`);
    return true;
  } catch (error) {
    io.stderr.write(`agent-bus: commit guard not installed in ${repo} — ${(error as Error).message}\n`);
    return false;
  }
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname.startsWith('127.');
}

/** The client address of an older name a repo's client was filed under on this machine, other than `name`: init retires it. */
async function rosterPrevious(bus: Bus, repo: string, client: string, name: string): Promise<string | null> {
  const others = (await bus.roster.at(repo))
    .map((agent) => parseNameLenient(agent.name))
    .filter((parsed) => parsed !== null && parsed.client === client && parsed.handle === null && parsed.name !== name)
    .map((parsed) => parsed?.name as string)
    .sort();
  return others[0] ?? null;
}

/**
 * What --remote can say of the repo's addresses at the hub. The hub puts an agent on its roster when
 * its token is made there (`agent-bus token create NAME`, the hub's to run, never init's); with
 * $AGENT_BUS_TOKEN set, one bounded whoami says whose token it is, and that it is there.
 */
async function hubEnrol(remote: string, env: Env, names: string[]): Promise<string> {
  const later = (which: string[]): string =>
    `${which.join(', ')} ${which.length === 1 ? 'is' : 'are'} on the hub's roster once a token is made for ${which.length === 1 ? 'it' : 'each'} (on the hub: agent-bus token create ${which[0] ?? 'REPO/CLIENT'})`;
  const token = setting(env, 'AGENT_BUS_TOKEN');
  if (token === '') return `On the hub: ${later(names)}.`;
  try {
    const reply = await hubRequest({ url: remote, token, from: 'env' }, 'POST', HUB_PATHS.mcp, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, 5_000);
    const speaker = reply.headers[SPEAKER_HEADER];
    if (reply.status !== 200 || typeof speaker !== 'string') return `On the hub: it did not take $AGENT_BUS_TOKEN (HTTP ${reply.status}); ${later(names)}.`;
    const address = clientAddressOf(speaker) ?? speaker;
    const rest = names.filter((name) => name !== address);
    if (rest.length === names.length) return `On the hub: $AGENT_BUS_TOKEN is ${speaker}'s, none of this repo's; ${later(names)}.`;
    return `On the hub: ${address} is on its roster (the token's agent)${rest.length > 0 ? `; ${later(rest)}` : ''}.`;
  } catch (error) {
    return `On the hub: could not reach ${remote} (${errorLine((error as Error).message)}); ${later(names)}.`;
  }
}

/** The next step: which clients are wired, how to start one, and how to look (at the hub, for --remote). */
function nextSteps(wired: RepoPlan[], clients: string[], home: string, remote: string | null, loggedIn: boolean): string {
  const [first] = wired;
  if (first === undefined) return '';
  const profiles = clients.map((client) => profileFor(client));
  const [starter, ...others] = profiles;
  if (starter === undefined) return '';
  const where = wired.length === 1 ? shortPath(first.repo, home) : 'REPO';
  const start = `cd ${where.includes(' ') ? quoted(where) : where} && ${starter.command}`;
  const rows: Array<[string, string]> = [
    [start, `start ${starter.name} there${others.length > 0 ? ` (or ${others.map((profile) => profile.command).join(', ')})` : ''}${remote === null ? '' : ', with AGENT_BUS_TOKEN set'}`],
    // A machine already using that hub needs no login.
    ...(remote === null || loggedIn ? [] : [[`agent-bus login ${remote}`, "make this machine's commands use the hub"] as [string, string]]),
    ['agent-bus agents', 'see who is on the bus'],
    ['agent-bus doctor', 'check the wiring'],
  ];
  const width = Math.max(...rows.map(([command]) => command.length));
  const repos = wired.length === 1 ? (first.name ?? '') : `${wired.length} repos`;
  return [`Wired ${repos} for ${profiles.map((profile) => profile.name).join(', ')}. Next:`, ...rows.map(([command, what]) => `  ${command.padEnd(width)}   ${what}`)].join('\n') + '\n';
}

export const run: CommandRunner = async (args, io) => {
  const scan = Boolean(args.values.scan);
  const remote = remoteUrl(args.values.remote);
  const name = typeof args.values.name === 'string' ? args.values.name : undefined;
  if (name !== undefined && (scan || args.positionals.length > 1)) {
    throw new UsageError('--name only applies to single-repo init (omit --scan and pass exactly one path)');
  }
  const named = typeof args.values.clients === 'string' ? args.values.clients : null;
  const detected = named === null ? clientsOnPath(io.env) : null;
  const clients = detected?.clients ?? parseClients(named ?? '');
  // A machine set to use a hub wires its repos with --remote: said before anything else.
  const hub = hubAccess(io.env);
  if (remote === null && hub !== null) throw new BusError(`this machine is set to use the hub at ${hub.url}: wire the repo for it with agent-bus init --remote ${hub.url}, or ${hub.from === 'env' ? 'unset AGENT_BUS_URL' : 'run agent-bus logout'} to wire it for this machine's own bus`);
  // Before anything is opened or written: with no path given, this folder must be in a repo.
  if (args.positionals.length === 0 && !scan && gitRoot(io.cwd) === null) {
    throw new BusError(`no git repository at ${io.cwd} or above it: run git init there first, or give the repo's path (agent-bus init PATH)`);
  }
  const flag = typeof args.values['bin-path'] === 'string' ? args.values['bin-path'] : undefined;
  const launcher = launcherFor(flag, io.env, io.cwd);
  const options = {
    paths: args.positionals,
    clients,
    scan,
    force: Boolean(args.values.force),
    prefix: typeof args.values.prefix === 'string' ? args.values.prefix : '',
    name,
    launcher,
    remote,
    hooks: hooksChoice(args.values.hooks),
  };
  const plans = planInit(options, io.cwd);
  // Wired to a hub, the repos need nothing of this machine's bus (there may be none).
  const bus = remote === null ? openBus(io.env) : null;
  if (remote !== null && new URL(remote).protocol === 'http:' && !isLoopbackHost(new URL(remote).hostname)) {
    for (const plan of plans) plan.notes.push(`${remote} is plain http: the token would cross the network unencrypted; put TLS in front of the hub and use https`);
  }
  try {
    for (const plan of bus === null ? [] : plans.filter(wires)) {
      for (const client of plan.clients) {
        if (client.name === null || bus === null) continue;
        const known = await bus.roster.get(client.name);
        if (known && known.repoPath !== plan.repo && existsSync(known.repoPath)) {
          plan.notes.push(`${quoted(client.name)} is also registered for ${known.repoPath} — if that repo is live too they share an inbox; pin a name with .agent-bus-name`);
        }
        // A name this repo's client was filed under before (an earlier --name, a folder renamed): retired for the new one.
        if (client.previous_name === null && (client.action === 'write' || client.action === 'refresh')) {
          const previous = await rosterPrevious(bus, plan.repo, client.client, client.name);
          if (previous !== null) {
            client.previous_name = previous;
            plan.previous_name ??= previous;
            plan.notes.push(`renaming from ${quoted(previous)} to ${quoted(client.name)}`);
          }
        }
      }
    }
    if (args.values.json) {
      const shaped = plans.map(({ pin, ...plan }) => ({ ...plan, pin: pin === null ? null : relative(plan.repo, pin.path), clients: plan.clients.map(({ files: _files, ...client }) => client) }));
      io.stdout.write(`${JSON.stringify(shaped, null, 2)}\n`);
      return 0;
    }
    const home = io.env.HOME ?? homedir();
    io.stdout.write(render(plans, clients, home, detected === null ? '' : detected.found ? ' (found on PATH)' : ' (no client found on PATH)'));
    // Nothing to wire is never a silent success.
    if (plans.every((plan) => plan.action === 'skip-not-repo')) {
      const where = options.paths.length > 0 ? options.paths.map((path) => resolve(io.cwd, path)).join(', ') : io.cwd;
      throw new BusError(scan ? `no git repository under ${where}: run git init in one, or scan another folder` : `${where} is not a git repository: run git init there first, or give a repo's path`);
    }
    const changing = plans.filter(repoChanges);
    const bulk = scan || args.positionals.length > 1;
    // The commit guard goes where it is asked for (--guard), into every repo wired, and nowhere else.
    const guarded = args.values.guard && !(bulk && !args.values.apply) ? plans.filter((plan) => !plan.action.startsWith('skip')) : [];
    const guardFailed = guarded.filter((plan) => !guardRepo(plan.repo, binPath(flag, io.env), io)).length;
    if (bulk && !args.values.apply && changing.length > 0) {
      io.stdout.write(`DRY RUN. Re-run with --apply to write changes (${changing.length} repo(s) will be modified${args.values.guard ? ', and the commit guard installed' : ''}).\n`);
      return 0;
    }
    const failedRepos = new Set<string>();
    for (const plan of changing) {
      try {
        for (const client of plan.clients) {
          for (const file of client.files) if (file.before !== file.after) writeAtomic(file.path, file.after);
        }
        if (plan.pin !== null && plan.pin.before !== plan.pin.after) writeAtomic(plan.pin.path, plan.pin.after);
      } catch (error) {
        failedRepos.add(plan.repo);
        io.stderr.write(`agent-bus: skipped ${plan.repo} — ${(error as Error).message}\n`);
      }
    }
    io.stdout.write(changing.length === 0 ? 'nothing to do.\n' : `Applied to ${changing.length - failedRepos.size} repo(s).\n`);
    const wired = plans.filter((plan) => wires(plan) && !failedRepos.has(plan.repo));
    // A personal file holds this machine's agent-bus: git must never commit it.
    for (const plan of wired) {
      for (const file of plan.clients.flatMap((client) => client.files).filter((file) => file.personal)) {
        io.stdout.write(`${relative(plan.repo, file.path)}: ${ensureIgnored(plan.repo, file.path)}\n`);
      }
    }
    const addresses = wired.flatMap((plan) => plan.clients.filter((client) => client.name !== null && (client.action === 'write' || client.action === 'refresh')).map((client) => client.name as string));
    if (bus !== null) {
      for (const plan of wired) {
        const names: string[] = [];
        for (const client of plan.clients) {
          if (client.name === null || (client.action !== 'write' && client.action !== 'refresh')) continue;
          names.push(client.name);
          if (client.previous_name !== null) await bus.roster.retire(client.previous_name, client.name);
        }
        await bus.roster.enrol(names, plan.repo, 'agent-bus init', existsSync);
      }
      // The person at this machine too, filed at home as people are: the wired agents can mail them (and hand them tasks) at once.
      const person = speakerName(undefined, io.env);
      if (wired.length > 0 && parseNameLenient(person)?.client === null) await bus.roster.enrol([person], home, 'agent-bus init', existsSync);
      if (addresses.length > 0) {
        const repos = [...new Set(wired.map((plan) => plan.name))].join(', ');
        io.stdout.write(`On the bus: ${addresses.join(', ')} (mail to ${addresses.length === 1 ? 'it' : 'them'}, or to ${repos}, waits for the first session).\n`);
      }
    } else if (remote !== null && addresses.length > 0) {
      io.stdout.write(`${await hubEnrol(remote, io.env, addresses)}\n`);
    }
    if (wired.length > 0 && onPath(launcher.command, io.env) === null && (launcher.local === null || launcher.local === 'keep')) {
      // --bin-path helps Claude Code alone: the other clients read no personal file in the repo.
      const binPath = clients.includes('claude') ? ", or (for Claude Code) re-run with --bin-path PATH" : '';
      io.stdout.write(`note: ${launcher.command} is not on PATH here, and the wired clients run it: install it (npm install -g agent-bus)${binPath}\n`);
    }
    io.stdout.write(nextSteps(wired, clients, home, remote, remote !== null && hubAccess(io.env)?.url === remote.replace(/\/+$/, '')));
    return failedRepos.size + guardFailed > 0 ? 1 : 0;
  } finally {
    await bus?.close();
  }
};
