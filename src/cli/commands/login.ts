/** `agent-bus login URL --token T` / `agent-bus logout`: the hub this machine talks to, saved privately in the bus folder. */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { BusError } from '../../model/errors.js';
import { loginPath } from '../../adapters/hub-access.js';
import { callHubTool } from '../../remote/calls.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { quoted } from '../../model/quote.js';

/** Written whole or not at all, private from its first byte (the token is in it). */
function writePrivate(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    const fd = openSync(temporary, 'wx', 0o600);
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export const run: CommandRunner = async (args, io) => {
  const [given] = args.positionals;
  const token = typeof args.values.token === 'string' ? args.values.token.trim() : '';
  if (given === undefined) throw new UsageError("login: give the hub's URL, e.g. agent-bus login https://hub.example:8787 --token TOKEN");
  if (token === '') throw new UsageError('login: give the token with --token (agent-bus token create NAME on the hub prints one)');
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`login: ${quoted(given)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`login: ${quoted(given)} is not an http or https URL`);
  const base = given.trim().replace(/\/+$/, '');
  // Saved only once the hub has taken the token.
  const { value } = await callHubTool({ url: base, token, from: 'login' }, 'whoami', {});
  const path = loginPath(io.env);
  writePrivate(path, `${JSON.stringify({ url: base, token })}\n`);
  if (args.values.json) io.stdout.write(`${JSON.stringify({ url: base, name: value.name, saved: path })}\n`);
  else io.stdout.write(`logged in to ${base} as ${value.name} (saved in ${path}; AGENT_BUS_URL and AGENT_BUS_TOKEN win over it)\n`);
  return 0;
};

export const runLogout: CommandRunner = async (args, io) => {
  const path = loginPath(io.env);
  if (!existsSync(path)) throw new BusError(`logout: not logged in to a hub (no ${path})`);
  rmSync(path, { force: true });
  if (args.values.json) io.stdout.write(`${JSON.stringify({ removed: path })}\n`);
  else io.stdout.write(`logged out: removed ${path}\n`);
  return 0;
};
