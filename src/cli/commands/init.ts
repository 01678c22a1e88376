/** `agent-bus init`: wire repos for the clients asked for, or show the plan. */
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { writeAtomic } from '../../clients/config-files.js';
import { planInit, repoChanges, type RepoPlan } from '../../init/plan.js';
import { guardPlace, installGuard } from '../../init/commit-guard.js';
import { WIRINGS } from '../../clients/registry/wirings.js';
import { DEFAULT_CLIENT } from '../../clients/registry/profiles.js';
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import { setting, type Env } from '../../model/settings.js';
import type { CommandRunner } from '../spec.js';
import { quoted } from '../../model/quote.js';

/** The agent-bus to write into configs: --bin-path, $AGENT_BUS_BIN, the one on PATH (symlinks kept: a pipx-style shim stays stable), or the bare name. */
export function binPath(flag: string | undefined, env: Env): string {
  if (flag) return flag;
  const given = setting(env, 'AGENT_BUS_BIN');
  if (given !== '') return given;
  for (const folder of (env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    const candidate = join(folder, 'agent-bus');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return 'agent-bus';
}

function parseClients(raw: string | undefined): string[] {
  const clients = [...new Set((raw ?? DEFAULT_CLIENT).split(',').map((client) => client.trim()).filter((client) => client !== ''))];
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

function render(plans: RepoPlan[], clients: string[], home: string): string {
  if (plans.length === 0) return '(no repos found)\n';
  const actionWidth = Math.max(...plans.map((plan) => plan.action.length));
  const nameWidth = Math.max(8, ...plans.map((plan) => (plan.name ?? '-').length));
  const lines = plans.flatMap((plan) => {
    const touched = plan.clients.filter((client) => client.action === 'write' || client.action === 'refresh').map((client) => client.client);
    const extra = `${touched.length > 0 ? `   [${touched.join(', ')}]` : ''}${plan.notes.length > 0 ? `   (${plan.notes.join('; ')})` : ''}`;
    const head = `  ${plan.action.padEnd(actionWidth)}  ${(plan.name ?? '-').padEnd(nameWidth)}  ${shortPath(plan.repo, home)}${extra}`;
    // Then each file: what happens to it.
    const files = plan.clients.flatMap((client) =>
      client.files.map((file) => {
        const what = file.before === null ? 'create' : file.before === file.after ? 'unchanged' : 'refresh';
        return `      ${what.padEnd(9)}  ${relative(plan.repo, file.path)}  (${client.client})`;
      }),
    );
    return [head, ...files];
  });
  const count = (action: string): number => plans.filter((plan) => plan.action === action).length;
  const renamed = plans.filter((plan) => plan.previous_name !== null).length;
  lines.push(
    '',
    `${plans.length} repo(s) scanned · clients=${clients.join(',')} · write=${count('write')} refresh=${count('refresh')} renamed=${renamed} ` +
      `handwritten-skip=${count('skip-handwritten')} unreadable-skip=${count('skip-unreadable')} ignored=${count('skip-ignored')} not-repo=${count('skip-not-repo')}`,
  );
  return `${lines.join('\n')}\n`;
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

export const run: CommandRunner = async (args, io) => {
  const scan = Boolean(args.values.scan);
  const remote = remoteUrl(args.values.remote);
  const name = typeof args.values.name === 'string' ? args.values.name : undefined;
  if (name !== undefined && (scan || args.positionals.length > 1)) {
    throw new UsageError('--name only applies to single-repo init (omit --scan and pass exactly one path)');
  }
  const clients = parseClients(typeof args.values.clients === 'string' ? args.values.clients : undefined);
  const options = {
    paths: args.positionals,
    clients,
    scan,
    force: Boolean(args.values.force),
    prefix: typeof args.values.prefix === 'string' ? args.values.prefix : '',
    name,
    bin: binPath(typeof args.values['bin-path'] === 'string' ? args.values['bin-path'] : undefined, io.env),
    remote,
  };
  const plans = planInit(options, io.cwd);
  // Wired to a hub, the repos need nothing of this machine's bus (there may be none).
  const bus = remote === null ? openBus(io.env) : null;
  if (remote !== null && new URL(remote).protocol === 'http:' && !isLoopbackHost(new URL(remote).hostname)) {
    for (const plan of plans) plan.notes.push(`${remote} is plain http: the token would cross the network unencrypted; put TLS in front of the hub and use https`);
  }
  try {
    for (const plan of bus === null ? [] : plans) {
      for (const client of plan.clients) {
        const known = client.name && bus !== null ? await bus.roster.get(client.name) : null;
        if (known && known.repoPath !== plan.repo) {
          plan.notes.push(`${quoted(client.name)} is also registered for ${known.repoPath} — if that repo is live too they share an inbox; pin a name with .agent-bus-name`);
        }
      }
    }
    if (args.values.json) {
      const shaped = plans.map((plan) => ({ ...plan, clients: plan.clients.map(({ files: _files, ...client }) => client) }));
      io.stdout.write(`${JSON.stringify(shaped, null, 2)}\n`);
      return 0;
    }
    const home = io.env.HOME ?? homedir();
    io.stdout.write(render(plans, clients, home));
    const changing = plans.filter(repoChanges);
    const bulk = scan || args.positionals.length > 1;
    // The commit guard goes where it is asked for (--guard), into every repo wired, and nowhere else.
    const guarded = args.values.guard && !(bulk && !args.values.apply) ? plans.filter((plan) => !plan.action.startsWith('skip')) : [];
    const guardFailed = guarded.filter((plan) => !guardRepo(plan.repo, options.bin, io)).length;
    if (changing.length === 0) {
      io.stdout.write('nothing to do.\n');
      return guardFailed > 0 ? 1 : 0;
    }
    if (bulk && !args.values.apply) {
      io.stdout.write(`DRY RUN. Re-run with --apply to write changes (${changing.length} repo(s) will be modified${args.values.guard ? ', and the commit guard installed' : ''}).\n`);
      return 0;
    }
    let failed = 0;
    for (const plan of changing) {
      try {
        for (const client of plan.clients) {
          for (const file of client.files) if (file.before !== file.after) writeAtomic(file.path, file.after);
          if (bus !== null && client.previous_name !== null && client.name !== null) await bus.roster.retire(client.previous_name, client.name);
        }
      } catch (error) {
        failed++;
        io.stderr.write(`agent-bus: skipped ${plan.repo} — ${(error as Error).message}\n`);
      }
    }
    io.stdout.write(`Applied to ${changing.length - failed} repo(s).\n`);
    return failed + guardFailed > 0 ? 1 : 0;
  } finally {
    await bus?.close();
  }
};
