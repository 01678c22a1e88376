/**
 * After a send commits: wake the recipients that wake.json names. A direct
 * message wakes its addressee; a repo-wide or `*` message at most one agent
 * per repo (the most recently seen one with a command), since whoever wakes
 * first claims it. No agent is woken more than AGENT_BUS_WAKES_PER_HOUR times
 * an hour. Nothing here ever fails or delays a send.
 */
import type { AuditRow } from '../audit/record.js';
import { formatStamp, nowMicros } from '../model/clock.js';
import { setting, type Env } from '../model/settings.js';
import type { ClientRoute, MessageRecord } from '../model/records.js';
import { wakeRow, type Wakes } from '../core/wake-ops.js';
import { createRequire } from 'node:module';
import { queueWakeOf, QUEUE_WOKEN } from '../clients/registry/profiles.js';
import type { QueueWake } from '../clients/profile.js';
import { clientAddressOf, parseNameLenient } from '../core/names.js';
import { processEnded, systemProcessTable } from '../adapters/procs.js';
import { watcherRuns } from './native.js';
import { loadWakeConfig, lookupWake, type WakeConfig, type WakeLookup } from './config.js';
import { fireWake } from './fire.js';

export function wakesPerHour(env: Env): number {
  return setting(env, 'AGENT_BUS_WAKES_PER_HOUR');
}

/** Who a send wakes: each direct recipient; per repo of a fan-out, the freshest agent with a command. */
async function chooseTargets(wakes: Wakes, config: WakeConfig, records: MessageRecord[]): Promise<Array<{ record: MessageRecord; lookup: WakeLookup }>> {
  const targets: Array<{ record: MessageRecord; lookup: WakeLookup }> = [];
  const byRepo = new Map<string, MessageRecord[]>();
  for (const record of records) {
    if (record.fanoutId === null) targets.push({ record, lookup: lookupWake(config, record.toAgent) });
    else byRepo.set(record.toGroup ?? record.toAgent, [...(byRepo.get(record.toGroup ?? record.toAgent) ?? []), record]);
  }
  for (const copies of byRepo.values()) {
    const withCommand: Array<{ record: MessageRecord; lookup: WakeLookup; seen: string }> = [];
    for (const record of copies) {
      const lookup = lookupWake(config, record.toAgent);
      if (lookup.status !== 'command') continue;
      withCommand.push({ record, lookup, seen: await wakes.lastSeen(record.toAgent) });
    }
    withCommand.sort((a, b) => (a.seen < b.seen ? 1 : a.seen > b.seen ? -1 : 0));
    const chosen = withCommand[0];
    if (chosen) targets.push({ record: chosen.record, lookup: chosen.lookup });
  }
  return targets;
}

const NATIVE_NOTICE = 'agent-bus: new mail';

/** An idle session the sender can queue a turn for (Codex) that can read `to`'s mail, the most recently seen first, whose process still runs. */
function idleQueuedRoute(all: ClientRoute[], to: string): ClientRoute | null {
  const routes = all.filter(
    (route) => queueWakeOf(route.client) !== null && (route.agent === to || clientAddressOf(route.agent) === to) && route.turnState === 'idle' && !route.queuedAt,
  );
  if (routes.length === 0) return null;
  const table = systemProcessTable();
  const current = { bootId: table.bootId(), pidNs: table.pidNamespace() };
  const running = routes.filter(
    (route) => route.clientPid !== null && route.clientStarted !== null && !processEnded({ pid: route.clientPid, started: route.clientStarted, bootId: current.bootId, pidNs: current.pidNs }, table, current),
  );
  return running.sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1))[0] ?? null;
}

/** A turn queued for an idle session (`codex queue --thread <id>`): the client starts it, and its prompt hook shows the mail. */
function queueTurn(wake: QueueWake, executable: string, threadId: string, env: Env): string {
  try {
    const { spawn } = createRequire(import.meta.filename)('node:child_process') as typeof import('node:child_process');
    const child = spawn(executable, wake.queueArgs(threadId, NATIVE_NOTICE), { detached: true, stdio: 'ignore', env: env as NodeJS.ProcessEnv });
    child.on('error', () => undefined);
    child.unref();
    return child.pid === undefined ? 'fired:ERR:SpawnError' : 'fired:OK';
  } catch (error) {
    return `fired:ERR:${(error as Error).name || 'Error'}`;
  }
}

/** Whether a running watcher (a hook-watch, or a session's MCP server through its socket) waits for mail in `repo`. */
async function watched(wakes: Wakes, repo: string): Promise<boolean> {
  return (await wakes.watchersIn(repo)).some((watcher) => watcherRuns(watcher));
}

/** Native wake from the sender's side (Codex): null when nobody can be woken that way. */
async function pushWake(wakes: Wakes, env: Env, routes: ClientRoute[], record: MessageRecord, micros: number): Promise<string | null> {
  const route = idleQueuedRoute(routes, record.toAgent);
  const wake = route === null ? null : queueWakeOf(route.client);
  if (route === null || wake === null) return null;
  const executable = setting(env, wake.executableVariable) || route.executable || wake.executable;
  if (!(await wakes.count(route.agent, micros, wakesPerHour(env)))) return 'rate-limited';
  // Once until that turn starts: a second sender finds it queued already.
  if (!(await wakes.markQueued(route.threadId, formatStamp(micros)))) return null;
  return queueTurn(wake, executable, route.threadId, env);
}

/** Where a recipient's name may say it is a client the sender wakes: `/codex` in `repo/codex-2`. */
const QUEUE_WOKEN_MARKS = QUEUE_WOKEN.map((client) => `/${client}`);

/** Whether a send could wake anyone at all: a wake.json exists, or a recipient is an agent the sender wakes (Codex) and native wake is on. */
export function mayWake(env: Env, records: MessageRecord[]): boolean {
  if (records.length === 0) return false;
  if (loadWakeConfig(env).exists) return true;
  return setting(env, 'AGENT_BUS_NATIVE_WAKE') && records.some((record) => QUEUE_WOKEN_MARKS.some((mark) => record.toAgent.includes(mark)));
}

/** Wake what a committed send should wake: the audit rows of each wake (the core appends them). */
export async function wakeRecipients(wakes: Wakes, env: Env, actor: string, records: MessageRecord[]): Promise<AuditRow[]> {
  try {
    if (records.length === 0) return [];
    const config = loadWakeConfig(env);
    const usable = config.exists && config.problem === null;
    const native = setting(env, 'AGENT_BUS_NATIVE_WAKE');
    const limit = wakesPerHour(env);
    const rows: AuditRow[] = [];
    const covered = new Set<string>();
    if (usable) {
      for (const { record, lookup } of await chooseTargets(wakes, config, records)) {
        const micros = nowMicros();
        const now = formatStamp(micros);
        if (lookup.status === 'no-config') continue; // Native wake may still reach it, below.
        covered.add(record.toGroup ?? record.toAgent);
        covered.add(record.toAgent);
        let status: string;
        if (lookup.status !== 'command') status = lookup.status;
        else if (!(await wakes.count(record.toAgent, micros, limit))) status = 'rate-limited';
        else status = fireWake(lookup.command, { from: record.fromAgent, to: record.toAgent, threadId: record.threadId, messageId: record.messageId, body: record.body }, env);
        rows.push(wakeRow(now, actor, record, record.toAgent, 'command', status));
      }
    }
    // Recipients wake.json says nothing about: the sender queues a turn for an idle session (Codex).
    const pushed = new Set<string>();
    // One read of the routes for the whole send (a broadcast has a record per agent), and none at all
    // when no recipient is of a client the sender wakes: a name says its client.
    const anyQueued = native && records.some((record) => queueWakeOf(parseNameLenient(record.toAgent)?.client) !== null);
    const routes = anyQueued ? (await wakes.routes()).filter((route) => queueWakeOf(route.client) !== null && route.turnState === 'idle') : [];
    for (const record of records) {
      const repo = record.toGroup ?? record.toAgent;
      if (covered.has(record.toAgent) || (record.fanoutId !== null && (covered.has(repo) || pushed.has(repo)))) continue;
      if (usable && lookupWake(config, record.toAgent).status !== 'no-config') continue;
      // A repo's mail that a running watcher (Claude Code, opencode) waits for is its to take: nobody else is woken.
      // (It may have taken it already: a watcher wakes within milliseconds of the commit.)
      if (record.fanoutId !== null && routes.length > 0 && ((await wakes.fanoutTaken(record.fanoutId, repo)) || (await watched(wakes, repo)))) continue;
      const micros = nowMicros();
      const status = routes.length > 0 ? await pushWake(wakes, env, routes, record, micros) : null;
      if (status !== null) {
        pushed.add(repo);
        rows.push(wakeRow(formatStamp(micros), actor, record, record.toAgent, 'push', status));
      } else if (usable && record.fanoutId === null) {
        rows.push(wakeRow(formatStamp(micros), actor, record, record.toAgent, 'command', native ? 'no-config' : 'disabled'));
      }
    }
    return rows;
  } catch {
    // A wake is a courtesy: the mail is in the store whatever happens here.
    return [];
  }
}
