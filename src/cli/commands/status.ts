/** `agent-bus status`: where a message has got to, recipient by recipient (sent ✓, delivered ✓✓, read). */
import { openBus } from '../../runtime.js';
import { makeStyle } from '../../render/style.js';
import { statusText } from '../../render/receipts.js';
import type { CommandRunner } from '../spec.js';
import { UsageError } from '../args.js';
import { hubAccess } from '../../remote/settings.js';
import { parseName } from '../../core/names.js';
import { hubReceipts, localReceipts } from '../receipt-source.js';

export const run: CommandRunner = async (args, io) => {
  const id = (args.positionals[0] ?? '').trim();
  if (id === '') throw new UsageError('status: say which message (an id send printed with --json, or the start of one)');
  const name = typeof args.values.name === 'string' ? args.values.name : null;
  if (name !== null) parseName(name);
  const access = hubAccess(io.env);
  const bus = access === null ? openBus(io.env) : null;
  try {
    const source = bus === null ? hubReceipts(access as NonNullable<typeof access>, name) : localReceipts(bus, name);
    const status = await source.status(id);
    if (args.values.json) io.stdout.write(`${JSON.stringify(status)}\n`);
    else io.stdout.write(`${statusText(status, await makeStyle(io.stdout, io.env))}\n`);
    return 0;
  } finally {
    await bus?.close();
  }
};
