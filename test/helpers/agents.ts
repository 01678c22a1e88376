/** Agents on a test bus: an agent's environment, putting it on the roster, sending mail, and what the audit log says of it. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { IN_FLIGHT_MICROS } from '../../src/core/audit-check.js';
import { json, readAudit, runCli, type TempBus } from './bus-env.js';
import { waitFor, waitUntil } from './wait.js';

/** The environment of agent `name` working in `repo` on `bus`, with `extra` settings on top. */
export function agentEnv(bus: TempBus, name: string, repo: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: repo, ...extra };
}

/** Put the agent `env` names (AGENT_BUS_NAME) on the roster as itself, with nothing left unread, so mail to it is accepted. */
export function register(env: NodeJS.ProcessEnv): void {
  const name = env.AGENT_BUS_NAME;
  assert.ok(name, 'the environment names the agent (AGENT_BUS_NAME)');
  assert.equal(runCli(['send', 'joining', '--to', name], { env }).code, 0);
  assert.equal(runCli(['inbox'], { env }).code, 0);
}

/** What `agent-bus send --json` prints. */
export interface Sent {
  message_id: string;
  message_ids: string[];
  thread_id: string;
}

/**
 * `agent-bus send BODY --to TO` on `bus`, as `from` (--name) or else as its environment's speaker,
 * with `env` on top of the bus's; the test fails, with what the CLI said, when the send does.
 */
export function send(bus: TempBus, body: string, to: string, options: { from?: string; env?: NodeJS.ProcessEnv } = {}): Sent {
  const args = ['send', body, '--to', to, '--json', ...(options.from === undefined ? [] : ['--name', options.from])];
  return json<Sent>(runCli(args, { env: { ...bus.env, ...options.env } }));
}

/** The audit log's rows of operation `op` (every row when none is named). */
export function auditRows(bus: TempBus, op?: string): Array<Record<string, unknown>> {
  const rows = readAudit(bus.audit);
  return op === undefined ? rows : rows.filter((row) => row.op === op);
}

/** Wait until the audit log holds a row `matches` accepts, and return it. */
export function waitForAudit(bus: TempBus, matches: (row: Record<string, unknown>) => boolean, what: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  return waitFor(() => readAudit(bus.audit).find(matches), `an audit row: ${what}`, timeoutMs);
}

/** Wait until the watcher with process id `pid` has claimed its session in the store (the row a sender asks whether a repo is watched). */
export function waitForWatcher(bus: TempBus, pid: number, timeoutMs = 10_000): Promise<void> {
  return waitFor(() => (bus.rows(`SELECT pid FROM watchers WHERE pid = ${pid} AND agent IS NOT NULL`).length > 0 ? true : undefined), `watcher ${pid} to claim its session`, timeoutMs).then(() => undefined);
}

/** The `ts` of every audit row that parses (a process killed mid-write can leave the start of one). */
function auditStamps(bus: TempBus): string[] {
  let text = '';
  try {
    text = readFileSync(bus.audit, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line) => {
    try {
      return [String((JSON.parse(line) as { ts?: unknown }).ts ?? '')];
    } catch {
      return [];
    }
  });
}

/**
 * Wait until the newest message in `bus`'s store and the newest row of its audit log are older than
 * `audit verify`'s in-flight grace: from then on verify judges every one of them.
 */
export async function waitPastInFlightGrace(bus: TempBus): Promise<void> {
  const stamps = [...bus.rows<{ sent_at: string | null }>('SELECT MAX(sent_at) AS sent_at FROM messages').map((row) => row.sent_at ?? ''), ...auditStamps(bus)];
  const newest = Math.max(0, ...stamps.map((stamp) => Date.parse(stamp)).filter((ms) => !Number.isNaN(ms)));
  await waitUntil(() => Date.now() > newest + IN_FLIGHT_MICROS / 1000 + 1, "the newest message to be past audit verify's in-flight grace", IN_FLIGHT_MICROS / 1000 + 10_000, 50);
}
