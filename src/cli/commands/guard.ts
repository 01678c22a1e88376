/**
 * `agent-bus guard`: the commit guard. `install [REPO]` and `uninstall [REPO]` add and remove the git
 * pre-commit hook; `check` is what that hook runs: it refuses a commit of a staged file under another
 * agent's live exclusive reservation, one line per file, exit 1. The committer is who the hooks would
 * say: the agent whose shell tool runs the commit (its client's variables), else the person.
 */
import { resolve } from 'node:path';
import { openClient } from '../../connect.js';
import { repoName } from '../../adapters/identity.js';
import { clientOfShell } from '../../clients/registry/profiles.js';
import { holdLine } from '../../hooks/write-guard.js';
import { guardPlace, installGuard, stagedFiles, uninstallGuard } from '../../init/commit-guard.js';
import { errorLine } from '../../model/quote.js';
import { setting } from '../../model/settings.js';
import { UsageError } from '../args.js';
import { binPath } from './init.js';
import type { CommandIo, CommandRunner, ParsedArgs } from '../spec.js';

async function check(args: ParsedArgs, io: CommandIo): Promise<number> {
  const mode = setting(io.env, 'AGENT_BUS_RESERVATIONS');
  if (setting(io.env, 'AGENT_BUS_GUARD') === 'off' || mode === 'off') return 0;
  const place = guardPlace(io.cwd);
  const files = stagedFiles(place.root);
  if (files.length === 0) return 0;
  const shell = clientOfShell(io.env);
  const client = openClient(io.env, { cwd: place.root, as: null });
  let found;
  try {
    found = await client.reservations.inTheWay({
      place: { repo: repoName(place.root), root: place.root },
      files,
      client: shell?.client ?? null,
      sessionKey: shell?.sessionKey ?? null,
      refuse: mode === 'deny',
    });
  } catch (error) {
    // A bus that cannot be reached never stops a commit: the guard says so and lets it through.
    io.stderr.write(`agent-bus guard: could not check the reservations (${errorLine((error as Error).message)}): committing without the check\n`);
    return 0;
  } finally {
    await client.close().catch(() => undefined);
  }
  const refused = mode === 'deny' ? found.held.filter((hold) => hold.mode === 'exclusive') : [];
  const told = found.held.filter((hold) => !refused.includes(hold));
  if (args.values.json) io.stdout.write(`${JSON.stringify({ committer: found.holder, refused, warned: told })}\n`);
  for (const hold of told) io.stderr.write(`agent-bus guard: ${holdLine(hold)}: committed all the same; coordinate with ${hold.holder}\n`);
  if (refused.length === 0) return 0;
  for (const hold of refused) io.stderr.write(`agent-bus guard: ${holdLine(hold)}: not committed\n`);
  const holders = [...new Set(refused.map((hold) => hold.holder))].join(', ');
  io.stderr.write(`agent-bus guard: ask ${holders} to release (agent-bus send), or unstage those files; AGENT_BUS_GUARD=off or git commit --no-verify skips this check\n`);
  return 1;
}

export const run: CommandRunner = async (args, io) => {
  const [action, repo, ...extra] = args.positionals;
  if (extra.length > 0 || (action === 'check' && repo !== undefined)) throw new UsageError("guard: too many arguments. See 'agent-bus guard --help'.");
  if (action === 'check') return check(args, io);
  if (action !== 'install' && action !== 'uninstall') {
    throw new UsageError(`guard: expected install, uninstall or check, got ${action === undefined ? 'nothing' : `'${action}'`}. See 'agent-bus guard --help'.`);
  }
  const place = guardPlace(resolve(io.cwd, repo ?? '.'));
  const outcome = action === 'install' ? installGuard(place, binPath(typeof args.values['bin-path'] === 'string' ? args.values['bin-path'] : undefined, io.env)) : uninstallGuard(place);
  if (args.values.json) io.stdout.write(`${JSON.stringify({ repo: place.root, hook: place.hook, outcome })}\n`);
  else io.stdout.write(`${place.hook}: ${outcome}\n`);
  return 0;
};
