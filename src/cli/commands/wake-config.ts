/** `agent-bus wake-config show|set|clear|test`: the wake commands in wake.json. */
import { UsageError } from '../args.js';
import { printable } from '../../render/format.js';
import type { CommandRunner } from '../spec.js';
import { loadWakeConfig, lookupWake, saveWakeConfig, type WakeConfig, type WakeEntry } from '../../wake/config.js';
import { fireWake } from '../../wake/fire.js';
import { BusError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';

const ACTIONS = ['show', 'set', 'clear', 'test'];

function showText(config: WakeConfig): string {
  if (config.problem !== null) return `${config.path} cannot be used: ${config.problem}\n(no wake commands run until it is fixed)\n`;
  const keys = Object.keys(config.entries).sort();
  if (keys.length === 0) return '(no wake commands configured)\n';
  const width = Math.max(24, ...keys.map((key) => key.length + 2));
  const lines = [`# ${config.path}`];
  for (const key of keys) {
    const entry = config.entries[key];
    const scope = key.includes('/') ? '' : '  # every agent of this repo without an entry of its own';
    lines.push(`${printable(key).padEnd(width)}${entry === false || entry === undefined ? '(disabled)' : printable(entry)}${scope}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A wake.json that exists but cannot be read is the user's to fix: never overwritten. */
function writable(config: WakeConfig): WakeConfig {
  if (config.problem !== null) throw new BusError(`${config.path} cannot be used (${config.problem}); fix or remove it first. Nothing was changed`);
  return config;
}

function nameArg(name: string | undefined, action: string): string {
  const value = (name ?? '').trim();
  if (value === '' || /\s/.test(value)) throw new UsageError(`wake-config ${action}: NAME must be an agent, a client address or a repo, without spaces`);
  return value;
}

export const run: CommandRunner = async (args, io) => {
  const [action, name, command, ...extra] = args.positionals;
  if (action === undefined || !ACTIONS.includes(action)) {
    throw new UsageError(`wake-config: expected ${ACTIONS.join(', ')}, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus wake-config --help'.`);
  }
  if (extra.length > 0) throw new UsageError(`wake-config ${action}: unexpected argument ${quoted(extra[0])} (quote COMMAND if it has spaces)`);
  const config = loadWakeConfig(io.env);
  const json = Boolean(args.values.json);
  switch (action) {
    case 'show':
      if (name !== undefined) throw new UsageError(`wake-config show: unexpected argument ${quoted(name)}`);
      io.stdout.write(json ? `${JSON.stringify({ path: config.path, exists: config.exists, problem: config.problem, entries: config.entries })}\n` : showText(config));
      return 0;
    case 'set': {
      const key = nameArg(name, 'set');
      if (command === undefined || command.trim() === '') throw new UsageError("wake-config set: missing COMMAND (use false to turn waking off for NAME)");
      // `false` is a real off switch, never a command named false.
      const entry: WakeEntry = command.trim() === 'false' ? false : command;
      saveWakeConfig(config.path, { ...writable(config).entries, [key]: entry });
      io.stdout.write(json ? `${JSON.stringify({ name: key, command: entry })}\n` : entry === false ? `waking turned off for ${quoted(key)}\n` : `wake command set for ${quoted(key)} → ${printable(entry)}\n`);
      return 0;
    }
    case 'clear': {
      const key = nameArg(name, 'clear');
      if (command !== undefined) throw new UsageError(`wake-config clear: unexpected argument ${quoted(command)}`);
      const entries = { ...writable(config).entries };
      const had = key in entries;
      delete entries[key];
      if (had) saveWakeConfig(config.path, entries);
      io.stdout.write(json ? `${JSON.stringify({ name: key, cleared: had })}\n` : had ? `cleared the wake command for ${quoted(key)}\n` : `(no wake command for ${quoted(key)})\n`);
      return 0;
    }
    default: {
      const key = nameArg(name, 'test');
      if (command !== undefined) throw new UsageError(`wake-config test: unexpected argument ${quoted(command)}`);
      const lookup = lookupWake(config, key);
      const status =
        config.problem !== null
          ? 'no-config'
          : lookup.status === 'command'
            ? fireWake(lookup.command, { from: 'wake-config-test', to: key, threadId: 'test-thread', messageId: 'test-message', body: 'agent-bus wake test: if something happened, the wake command works.' }, io.env)
            : lookup.status;
      const fired = status === 'fired:OK';
      io.stdout.write(json ? `${JSON.stringify({ name: key, fired, status, entry: lookup.status === 'no-config' ? null : lookup.key })}\n` : `${key}: fired=${fired}, status=${status}${lookup.status !== 'no-config' ? ` (entry ${quoted(lookup.key)})` : ''}\n`);
      // Nothing fired is a failure: it says why on stderr, in one line.
      if (!fired) io.stderr.write(`agent-bus: wake-config test: nothing fired for ${quoted(key)} (${status})\n`);
      return fired ? 0 : 1;
    }
  }
};
