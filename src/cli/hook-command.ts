/** What the hook commands share: on a machine with the bus, the hook itself; with a hub set, one request to it. */
import { clientOf, runHook, type HookKind } from '../hooks/run.js';
import { runRemoteHook } from '../hooks/remote-hook.js';
import { hubAccess } from '../adapters/hub-access.js';
import type { HookBus } from '../core/hook-bus.js';
import type { CommandIo, ParsedArgs } from './spec.js';

/** `openBus`: this machine's bus, opened only when no hub is set (the command's, from runtime.ts). */
export async function runHookCommand(kind: HookKind, args: ParsedArgs, io: CommandIo, openBus: (env: CommandIo['env']) => HookBus): Promise<number> {
  const client = typeof args.values.client === 'string' ? args.values.client : undefined;
  const write = (text: string): void => {
    if (text !== '') io.stdout.write(text);
  };
  const warn = (text: string): void => {
    io.stderr.write(`${text}\n`);
  };
  const peek = kind === 'stop' && args.values.peek === true;
  const access = hubAccess(io.env);
  if (access !== null) return runRemoteHook({ kind, client: clientOf({ client, env: io.env }), peek, env: io.env, cwd: io.cwd, write, warn }, access);
  return runHook({ kind, client, peek, env: io.env, cwd: io.cwd, write, warn, openBus: () => openBus(io.env) });
}
