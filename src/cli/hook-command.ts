/** What both hook commands share. */
import { runHook, type HookKind } from '../hooks/run.js';
import type { CommandIo, ParsedArgs } from './spec.js';

export async function runHookCommand(kind: HookKind, args: ParsedArgs, io: CommandIo): Promise<number> {
  return runHook({
    kind,
    client: typeof args.values.client === 'string' ? args.values.client : undefined,
    env: io.env,
    cwd: io.cwd,
    write: (text) => {
      if (text !== '') io.stdout.write(text);
    },
    warn: (text) => io.stderr.write(`${text}\n`),
  });
}
