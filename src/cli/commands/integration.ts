/** `agent-bus integration add|list|rotate|remove`: webhook senders on the hub, each with a secret shown once. */
import { DEFAULT_GRACE_MS, type IntegrationView, type IntegrationWithSecret } from '../../core/integration-ops.js';
import { parseDuration } from '../../model/duration.js';
import { quoted } from '../../model/quote.js';
import { setting } from '../../model/settings.js';
import { openBusHere } from '../../runtime.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';

const ACTIONS = ['add', 'list', 'rotate', 'remove'] as const;

/** Which options each action takes. */
const OPTIONS_OF: Record<(typeof ACTIONS)[number], readonly string[]> = {
  add: ['kind', 'to', 'channel', 'severity'],
  list: [],
  rotate: ['grace'],
  remove: [],
};

/** Who set it up, for the audit log: this shell's name, else the operator. */
function actorOf(env: NodeJS.ProcessEnv): string {
  return setting(env, 'AGENT_BUS_NAME') || 'operator';
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** What a person is told once: the path to point the service at, and the secret. */
function secretNote(made: IntegrationWithSecret, rotated: boolean): string {
  const signing = made.kind === 'github' ? "GitHub's webhook secret" : 'the key of X-Agent-Bus-Signature';
  const grace = rotated && made.previous_secret_until !== null ? ` The old secret is accepted until ${made.previous_secret_until}.` : '';
  return `agent-bus: point the service at <hub>${made.path} and give it this secret as ${signing}. It is shown this once.${grace}\n`;
}

export const run: CommandRunner = async (args, io) => {
  const [action, name, ...rest] = args.positionals;
  if (!(ACTIONS as readonly string[]).includes(action ?? '')) {
    throw new UsageError(`integration: expected ${ACTIONS.join(', ')}, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus integration --help'.`);
  }
  const verb = action as (typeof ACTIONS)[number];
  if (rest.length > 0) throw new UsageError(`integration ${verb}: unexpected argument ${quoted(rest[0])}`);
  if (verb === 'list' && name !== undefined) throw new UsageError(`integration list: unexpected argument ${quoted(name)}`);
  if (verb !== 'list' && name === undefined) throw new UsageError(`integration ${verb}: give the integration's NAME`);
  for (const option of ['kind', 'to', 'channel', 'severity', 'grace']) {
    if (args.values[option] !== undefined && !OPTIONS_OF[verb].includes(option)) throw new UsageError(`integration ${verb}: --${option} is for integration ${option === 'grace' ? 'rotate' : 'add'}`);
  }
  if (verb === 'add' && (text(args.values.kind) === undefined || text(args.values.to) === undefined)) throw new UsageError('integration add: give --kind github|generic and --to ADDRESS');
  // Checked before the bus is opened: a mistake writes nothing.
  const graceMs = text(args.values.grace) === undefined ? DEFAULT_GRACE_MS : parseDuration(text(args.values.grace) as string);
  const json = Boolean(args.values.json);
  // Integrations belong to the store on this machine (the hub's), whatever hub this machine talks to.
  const bus = openBusHere(io.env);
  try {
    if (verb === 'add' || verb === 'rotate') {
      const made =
        verb === 'add'
          ? await bus.integrations.add({ name: name as string, kind: text(args.values.kind) as string, to: text(args.values.to) as string, channel: text(args.values.channel) ?? null, severity: text(args.values.severity) ?? null }, actorOf(io.env))
          : await bus.integrations.rotate(name as string, graceMs, actorOf(io.env));
      if (json) {
        io.stdout.write(`${JSON.stringify(made)}\n`);
      } else {
        io.stdout.write(`${made.secret}\n`);
        io.stderr.write(secretNote(made, verb === 'rotate'));
      }
      return 0;
    }
    if (verb === 'remove') {
      const removed = await bus.integrations.remove(name as string, actorOf(io.env));
      io.stdout.write(json ? `${JSON.stringify(removed)}\n` : `removed ${removed.name}: its deliveries are refused from now on\n`);
      return 0;
    }
    const listed: IntegrationView[] = await bus.integrations.list();
    if (json) {
      io.stdout.write(`${JSON.stringify(listed)}\n`);
      return 0;
    }
    if (listed.length === 0) {
      io.stdout.write('(no integrations yet: agent-bus integration add NAME --kind github --to REPO)\n');
      return 0;
    }
    for (const row of listed) {
      const where = row.channel === null ? `to ${row.to}` : `to #${row.channel}`;
      const grace = row.previous_secret_until === null ? '' : `  (old secret until ${row.previous_secret_until})`;
      io.stdout.write(`${row.name}  ${row.kind}  ${where}  ${row.severity}  ${row.path}${grace}\n`);
    }
    return 0;
  } finally {
    await bus.close();
  }
};
