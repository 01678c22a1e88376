/** `agent-bus tail`: the audit log's last rows, and with -f every new row as it is written. */
import type { AuditRow } from '../../audit/record.js';
import { openClient } from '../../connect.js';
import { positiveInt } from '../context.js';
import { oneLine, pad, padStyled, printable, shortIdText, terminalWidth, wrap } from '../../render/format.js';
import { when } from '../../model/when.js';
import { makeStyle, type Style } from '../../render/style.js';
import type { CommandRunner } from '../spec.js';

/** The op as a person reads it: a task's row says what happened to the task (`task take`, `task done`). */
function opLabel(row: AuditRow): string {
  const op = String(row.op ?? '?');
  return op === 'task' && typeof row.event === 'string' ? `task ${row.event}` : op;
}

export function renderAuditRow(row: AuditRow, style: Style, full: boolean, width: number): string {
  const from = typeof row.from === 'string' ? row.from : '';
  const to = typeof row.to === 'string' ? row.to : '';
  const preview = typeof row.body_preview === 'string' ? row.body_preview : '';
  const status = typeof row.wake_status === 'string' ? ` (${printable(row.wake_status)})` : '';
  const head =
    `${style.dim(pad(when(String(row.ts ?? '')), 12))}  ${pad(printable(opLabel(row)), 12)}` +
    `${padStyled(style.agent(from), from, 18)} → ${padStyled(style.agent(to), to, 18)}`;
  // The row's message (or task, or notice): `read`, `thread` and `task show` take it as shown.
  const thread = style.dim(`[${shortIdText(typeof row.message_id === 'string' ? row.message_id : null)}]`);
  if (full) return `${head}  ${thread}${status}\n${wrap(preview, width)}`;
  return `${head}  ${oneLine(preview)}${status}  ${thread}`;
}

export const run: CommandRunner = async (args, io) => {
  const limit = positiveInt(args.values.limit, 'limit', 50);
  const json = Boolean(args.values.json);
  const full = Boolean(args.values.full);
  const style = await makeStyle(io.stdout, io.env, json);
  const width = terminalWidth(io.stdout);
  const print = (row: AuditRow): void => {
    io.stdout.write(`${json ? JSON.stringify(row) : renderAuditRow(row, style, full, width)}\n`);
  };
  // Over a hub, the hub's audit log, not this machine's; followed, every send its bus stores from any machine.
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    for (const row of await client.audit.tail(limit)) print(row);
    if (!args.values.follow) return 0;
    return await client.audit.follow(print, (line) => io.stderr.write(`${line}\n`));
  } finally {
    await client.close();
  }
};
