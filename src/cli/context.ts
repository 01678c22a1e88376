/** What CLI commands share: who is speaking, opening the bus, parsing numeric flags. */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseName } from '../core/names.js';
import { speakerRegistrations as registrationsOfSpeaker } from '../core/roster.js';
import { canonicalPath } from '../core/identity.js';
import type { Registration } from '../model/records.js';
import type { Env } from '../core/settings.js';
import { UsageError } from './args.js';
import { quoted } from '../model/quote.js';

export const DEFAULT_HUMAN = 'human';

/** The name the CLI acts as: --name, else $AGENT_BUS_NAME, else human. */
export function speakerName(flag: string | boolean | undefined, env: Env): string {
  const name = typeof flag === 'string' ? flag.trim() : (env.AGENT_BUS_NAME ?? '').trim() || DEFAULT_HUMAN;
  parseName(name);
  return name;
}

/** How a speaker is put on the roster when it sends or connects (the rule is core's `speakerRegistrations`). */
export function speakerRegistrations(name: string, env: Env, cwd: string): Registration[] {
  const repo = (env.AGENT_BUS_REPO ?? '').trim();
  return registrationsOfSpeaker(name, {
    own: ((env.AGENT_BUS_NAME ?? '').trim() || DEFAULT_HUMAN) === name,
    declaredRepo: repo === '' ? null : canonicalPath(resolve(cwd, repo)),
    cwd,
    home: env.HOME && env.HOME !== '' ? env.HOME : homedir(),
  });
}

/** A count option: a whole number of at least 1; more than `max` is taken as `max` (as the MCP tools do). */
export function positiveInt(value: string | boolean | undefined, flag: string, fallback: number, max = 10_000): number {
  if (value === undefined || typeof value === 'boolean') return fallback;
  if (!/^\d+$/.test(value.trim()) || Number.parseInt(value, 10) < 1) {
    throw new UsageError(`--${flag} must be a whole number of at least 1, got ${quoted(value)}`);
  }
  return Math.min(max, Number.parseInt(value, 10));
}

/** The whole of standard input, for a body given as `-`; `what` names it in the error when stdin is a terminal. */
export async function readStdin(stdin: NodeJS.ReadStream, what: string): Promise<string> {
  if (stdin.isTTY) throw new UsageError(`${what} is - but standard input is a terminal; pipe the text in`);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
