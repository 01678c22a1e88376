/**
 * `agent-bus integration add|list|rotate|remove|test|outbox|retry`: outside services on the bus.
 * Webhooks in, each with a secret shown once; webhooks out, with their events' outbox.
 */
import { DEFAULT_GRACE_MS, type IntegrationStanding, type IntegrationWithSecret, type OutboxView } from '../../core/integration-ops.js';
import { parseDuration } from '../../model/duration.js';
import { quoted } from '../../model/quote.js';
import { setting } from '../../model/settings.js';
import { openBusHere } from '../../runtime.js';
import { UsageError } from '../args.js';
import { remainingText, untilText, when as whenText } from '../../model/when.js';
import type { CommandRunner } from '../spec.js';

const ACTIONS = ['add', 'list', 'rotate', 'remove', 'test', 'outbox', 'retry'] as const;
type Action = (typeof ACTIONS)[number];

/** Which options each action takes. */
const OPTIONS_OF: Record<Action, readonly string[]> = {
  add: ['kind', 'to', 'channel', 'severity', 'url', 'on'],
  list: [],
  rotate: ['grace'],
  remove: [],
  test: [],
  outbox: ['state'],
  retry: [],
};
const ALL_OPTIONS = [...new Set(Object.values(OPTIONS_OF).flat())];

/** Who set it up, for the audit log: this shell's name, else the operator. */
function actorOf(env: NodeJS.ProcessEnv): string {
  return setting(env, 'AGENT_BUS_NAME') || 'operator';
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** What a person is told once: the path to point the service at, or what signs the posts, and the secret. */
function secretNote(made: IntegrationWithSecret, rotated: boolean): string {
  if (made.direction === 'out') {
    return `agent-bus: ${made.name} posts ${made.on} to ${made.url}; each post is signed with this secret (X-Agent-Bus-Signature). It is shown this once.\n`;
  }
  const signing = made.kind === 'github' ? "GitHub's webhook secret" : 'the key of X-Agent-Bus-Signature';
  const grace = rotated && made.previous_secret_until !== null ? ` The old secret is still accepted ${remainingText(made.previous_secret_until)}.` : '';
  return `agent-bus: point the service at <hub>${made.path} and give it this secret as ${signing}. It is shown this once.${grace}\n`;
}

function listLine(row: IntegrationStanding): string {
  if (row.direction === 'out') {
    const standing = `${row.delivered} delivered, ${row.queued} queued, ${row.failed} failed`;
    return `${row.name}  ${row.kind}  on ${row.on}${row.channel === null ? '' : ` #${row.channel}`}  ${row.url}  (${standing})\n`;
  }
  const where = row.channel === null ? `to ${row.to}` : `to #${row.channel}`;
  const grace = row.previous_secret_until === null ? '' : `  (old secret ${untilText(row.previous_secret_until)})`;
  return `${row.name}  ${row.kind}  ${where}  ${row.severity}  ${row.path}${grace}\n`;
}

function outboxLine(row: OutboxView): string {
  const status = row.last_status === null ? '' : ` status ${row.last_status}`;
  const when = row.state === 'queued' ? `next try ${whenText(row.next_at)}` : `${row.state} ${whenText(row.finished_at)}`;
  const error = row.state !== 'delivered' && row.last_error !== null ? `: ${row.last_error}` : '';
  return `${row.event_id}  ${row.integration}  ${row.event}  ${row.state}  ${row.attempts} attempt${row.attempts === 1 ? '' : 's'}${status}  ${when}${error}\n`;
}

export const run: CommandRunner = async (args, io) => {
  const [action, name, ...rest] = args.positionals;
  if (!(ACTIONS as readonly string[]).includes(action ?? '')) {
    throw new UsageError(`integration: expected ${ACTIONS.join(', ')}, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus integration --help'.`);
  }
  const verb = action as Action;
  if (rest.length > 0) throw new UsageError(`integration ${verb}: unexpected argument ${quoted(rest[0])}`);
  if (verb === 'list' && name !== undefined) throw new UsageError(`integration list: unexpected argument ${quoted(name)}`);
  if (verb !== 'list' && verb !== 'outbox' && name === undefined) throw new UsageError(`integration ${verb}: give the ${verb === 'retry' ? "event's id (integration outbox lists them)" : "integration's NAME"}`);
  for (const option of ALL_OPTIONS) {
    if (args.values[option] !== undefined && !OPTIONS_OF[verb].includes(option)) {
      const owners = ACTIONS.filter((candidate) => OPTIONS_OF[candidate].includes(option));
      throw new UsageError(`integration ${verb}: --${option} is for integration ${owners.join(' or ')}`);
    }
  }
  if (verb === 'add' && text(args.values.kind) === undefined) throw new UsageError('integration add: give --kind: github or generic with --to ADDRESS, or webhook, slack, discord or ntfy with --url URL --on WHAT');
  // Checked before the bus is opened: a mistake writes nothing.
  const graceMs = text(args.values.grace) === undefined ? DEFAULT_GRACE_MS : parseDuration(text(args.values.grace) as string);
  const json = Boolean(args.values.json);
  const print = (value: unknown): void => void io.stdout.write(`${JSON.stringify(value)}\n`);
  // Integrations belong to the store on this machine (the hub's), whatever hub this machine talks to.
  const bus = openBusHere(io.env);
  try {
    switch (verb) {
      case 'add':
      case 'rotate': {
        const made =
          verb === 'add'
            ? await bus.integrations.add(
                {
                  name: name as string,
                  kind: text(args.values.kind) as string,
                  to: text(args.values.to) ?? null,
                  channel: text(args.values.channel) ?? null,
                  severity: text(args.values.severity) ?? null,
                  url: text(args.values.url) ?? null,
                  on: text(args.values.on) ?? null,
                },
                actorOf(io.env),
              )
            : await bus.integrations.rotate(name as string, graceMs, actorOf(io.env));
        if (json) {
          print(made);
        } else if (made.secret === '') {
          io.stdout.write(`added ${made.name}: ${made.kind} posts ${made.on}${made.channel === null ? '' : ` on #${made.channel}`} to ${made.url}\n`);
        } else {
          io.stdout.write(`${made.secret}\n`);
          io.stderr.write(secretNote(made, verb === 'rotate'));
        }
        return 0;
      }
      case 'remove': {
        const removed = await bus.integrations.remove(name as string, actorOf(io.env));
        if (json) print(removed);
        else io.stdout.write(`removed ${removed.name}: nothing is taken from it or posted to it from now on\n`);
        return 0;
      }
      case 'test': {
        const settled = await bus.integrations.test(name as string, actorOf(io.env));
        if (json) print(settled);
        else io.stdout.write(`${settled.integration}: ${settled.state}${settled.status === null ? '' : ` (status ${settled.status})`}${settled.error === null ? '' : `: ${settled.error}`}\n`);
        // A test the receiver did not take fails the command: the set-up needs a look.
        return settled.state === 'delivered' ? 0 : 1;
      }
      case 'outbox': {
        const rows = await bus.integrations.outbox({ integration: name ?? null, state: text(args.values.state) ?? null });
        if (json) print(rows);
        else if (rows.length === 0) io.stdout.write('(no events out)\n');
        else for (const row of rows) io.stdout.write(outboxLine(row));
        return 0;
      }
      case 'retry': {
        const retried = await bus.integrations.retry(name as string, actorOf(io.env));
        if (json) print(retried);
        else io.stdout.write(`queued ${retried.event_id} again: the process serving the outbox posts it now\n`);
        return 0;
      }
      default: {
        const listed = await bus.integrations.standing();
        if (json) print(listed);
        else if (listed.length === 0) io.stdout.write('(no integrations yet: agent-bus integration add NAME --kind github --to REPO)\n');
        else for (const row of listed) io.stdout.write(listLine(row));
        return 0;
      }
    }
  } finally {
    await bus.close();
  }
};
