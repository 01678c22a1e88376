/**
 * The hook commands on a machine set to use a hub, in bundles of their own: one
 * request to the hub is all a remote hook does, so its bundle holds the
 * dispatcher, the dialects and that request, and none of the bus.
 */
import { clientOf, type HookKind } from '../hooks/run-kind.js';
import { runRemoteHook } from '../hooks/remote-hook.js';
import { hubAccess } from '../adapters/hub-access.js';
import { join } from 'node:path';
import { loadCommandBundle } from './command-loader.js';
import { REMOTE_HOOK_KINDS } from './remote-hooks.js';
import type { CommandIo, ParsedArgs } from './spec.js';


export async function runRemoteHookCommand(kind: HookKind, args: ParsedArgs, io: CommandIo): Promise<number> {
  const client = typeof args.values.client === 'string' ? args.values.client : undefined;
  const access = hubAccess(io.env);
  // The launcher picked this bundle because a hub is set; a login file gone since is a hub that cannot answer.
  if (access === null) return 0;
  return runRemoteHook(
    {
      kind,
      client: clientOf({ client, env: io.env }),
      env: io.env,
      cwd: io.cwd,
      write: (text) => {
        if (text !== '') io.stdout.write(text);
      },
      warn: (text) => {
        io.stderr.write(`${text}\n`);
      },
    },
    access,
  );
}

/**
 * A remote hook's bundle entry. The command line a client's config gives (`hook-… [--client ID]`)
 * is read here, with no dispatcher; anything else (`--help`, a mistake) is handed to the hook's
 * full bundle beside this one, which answers it as every command does.
 */
export function startRemoteHook(name: string, io: CommandIo, directory: string): Promise<number> {
  const [, ...rest] = io.argv;
  const kind = REMOTE_HOOK_KINDS[name];
  const plain = rest.length === 0 ? {} : rest.length === 2 && rest[0] === '--client' && /^[a-z][a-z0-9-]*$/.test(rest[1] ?? '') ? { client: rest[1] } : null;
  if (kind === undefined || plain === null) return loadCommandBundle(join(directory, `${name}.cjs`)).bundle.start(io);
  return runRemoteHookCommand(kind, { values: plain, positionals: [] }, io);
}
