import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStamp } from '../../src/model/clock.js';
import { decideSessionStart, type SessionStarter } from '../../src/core/sessions.js';
import { clientProcessOf, lineageOf, parseProcStat, parsePsOutput, processEnded, type LineageEntry, type ProcessInfo, type ProcessTable } from '../../src/adapters/procs.js';
import type { SessionRecord } from '../../src/store/ports.js';
import type { Bus } from '../../src/core/bus.js';
import { callSessionKey, hubSessionLive, HUB_SESSION_BOOT_ID } from '../../src/core/hub-sessions.js';
import { SessionsReadAhead } from '../../src/http/hub/hub-session.js';
import type { TokenRecord } from '../../src/model/records.js';

const NOW = Date.UTC(2026, 5, 1, 12) * 1000;
const CLIENT: LineageEntry = [100, '5000', 'claude'];

function row(name: string, options: Partial<SessionRecord> & { client?: LineageEntry } = {}): SessionRecord {
  const { client = CLIENT, ...rest } = options;
  return {
    serverPid: Math.floor(Math.random() * 1e6),
    serverStarted: 's',
    name,
    clientAddress: 'repo/claude',
    repoPath: '/r',
    lineage: JSON.stringify([[50, '1', 'bash'], client]),
    sessionKey: null,
    bootId: null,
    pidNs: null,
    startedAt: formatStamp(NOW),
    lastSeen: formatStamp(NOW),
    endedAt: null,
    ...rest,
  };
}

const me = (overrides: Partial<SessionStarter> = {}): SessionStarter => ({ clientAddress: 'repo/claude', clientProcess: [200, '6000', 'claude'], sessionKey: null, pinned: null, ...overrides });
const context = { nowMicros: NOW, resumeHours: 1, ended: () => false };
const minutesAgo = (minutes: number): string => formatStamp(NOW - minutes * 60_000_000);

test('the lowest free number; a twin of a running server shares its address', () => {
  assert.equal(decideSessionStart([], [], me(), context).name, 'repo/claude-1');
  const running = [row('repo/claude-1'), row('repo/claude-2', { client: [300, '7000', 'claude'] })];
  assert.equal(decideSessionStart(running, [], me(), context).name, 'repo/claude-3');
  assert.equal(decideSessionStart(running, [], me({ clientProcess: CLIENT }), context).name, 'repo/claude-1', 'same client process, no session ids');
  const keyed = [row('repo/claude-1', { sessionKey: 'a' })];
  assert.equal(decideSessionStart(keyed, [], me({ clientProcess: CLIENT, sessionKey: 'b' }), context).name, 'repo/claude-2', 'two session ids tell them apart');
});

test('reserved numbers are used only when every other is taken', () => {
  const ended = [row('repo/claude-1', { endedAt: minutesAgo(5), client: [999, 'x', 'claude'] })];
  assert.equal(decideSessionStart(ended, [], me(), { ...context, maxNumber: 2 }).name, 'repo/claude-2');
  const both = [...ended, row('repo/claude-2', { client: [998, 'y', 'claude'] })];
  const plan = decideSessionStart(both, [], me(), { ...context, maxNumber: 2 });
  assert.equal(plan.name, 'repo/claude-1');
  assert.deepEqual(plan.giveUp, ['repo/claude-1'], 'mail sent to the number after it ended moves to the client address before a fresh taker gets it');
  const full = [row('repo/claude-1', { client: [997, 'z', 'claude'] }), row('repo/claude-2', { client: [998, 'y', 'claude'] })];
  const crowded = decideSessionStart(full, [], me(), { ...context, maxNumber: 2 });
  assert.equal(crowded.name, 'repo/claude');
  assert.match(crowded.warnings.join(' '), /every session number of 'repo\/claude' is taken/);
});

test('expired rows are deleted; crashed rows are ended and their numbers given up', () => {
  const old = row('repo/claude-4', { endedAt: minutesAgo(120) });
  const crashed = row('repo/claude-1', { client: [500, 'c', 'claude'] });
  const labelled = row('repo/claude-docs', { client: [501, 'd', 'claude'] });
  const plan = decideSessionStart([old, crashed, labelled], [], me(), { ...context, ended: (candidate) => candidate !== old });
  assert.deepEqual(plan.expire.map((key) => key.serverPid), [old.serverPid]);
  assert.deepEqual(plan.endCrashed.map((key) => key.serverPid).sort(), [crashed.serverPid, labelled.serverPid].sort());
  assert.deepEqual(plan.giveUp, ['repo/claude-1'], 'a label keeps its mail for its next taker');
  assert.equal(plan.name, 'repo/claude-2', 'the crashed number stays reserved for its comeback');
});

test('pinned handles, comebacks and numbers older versions registered', () => {
  assert.equal(decideSessionStart([], [], me({ pinned: 'frontend' }), context).name, 'repo/claude-frontend');
  const held = decideSessionStart([row('repo/claude-frontend', { client: [7, '7', 'claude'] })], [], me({ pinned: 'frontend' }), context);
  assert.equal(held.name, 'repo/claude-1');
  assert.match(held.warnings[0] ?? '', /'repo\/claude-frontend' is held by another running session/);
  const left = row('repo/claude-3', { endedAt: minutesAgo(10), sessionKey: 'conv-1', client: [1, '1', 'claude'] });
  const back = decideSessionStart([left], [], me({ sessionKey: 'conv-1' }), context);
  assert.equal(back.name, 'repo/claude-3');
  assert.equal(back.replace.length, 1);
  const roster = [{ name: 'repo/claude-1', repoPath: '/r', registeredAt: '', lastSeen: '', repo: 'repo', client: null, topic: null }];
  assert.equal(decideSessionStart([], roster, me(), context).name, 'repo/claude-2', 'an untracked numbered name may still be in use');
});

test('/proc stat lines with spaces and parentheses in the command name', () => {
  const fields = Array.from({ length: 50 }, (_, index) => String(index));
  fields[0] = 'S';
  fields[1] = '42';
  fields[19] = '123456';
  const info = parseProcStat(7, `7 (my (odd) cmd) ${fields.join(' ')}`);
  assert.deepEqual(info, { pid: 7, ppid: 42, started: '123456', state: 'S', name: 'my (odd) cmd' });
  assert.equal(parseProcStat(7, 'garbage'), null);
});

test('ps output with a five-word start time and a command with spaces', () => {
  const table = parsePsOutput('  1     0 Ss   Mon Nov 30 00:00:01 2026 launchd\n 812     1 S    Mon Nov 30 09:10:11 2026 Claude Helper\n');
  assert.deepEqual(table.get(812), { pid: 812, ppid: 1, state: 'S', started: 'Mon Nov 30 09:10:11 2026', name: 'Claude Helper' });
});

function fakeTable(processes: ProcessInfo[], readable = true): ProcessTable {
  const byPid = new Map(processes.map((info) => [info.pid, info]));
  return { get: (pid) => (readable ? (byPid.get(pid) ?? null) : undefined), bootId: () => 'boot-1', pidNamespace: () => 'pid:[1]' };
}

test('lineage, the client behind shells, and evidence-only liveness', () => {
  const table = fakeTable([
    { pid: 10, ppid: 9, started: 'a', state: 'S', name: 'node' },
    { pid: 9, ppid: 8, started: 'b', state: 'S', name: 'sh' },
    { pid: 8, ppid: 1, started: 'c', state: 'S', name: 'claude' },
    { pid: 1, ppid: 0, started: 'd', state: 'S', name: 'init' },
  ]);
  const lineage = lineageOf(10, table);
  assert.deepEqual(lineage.map(([pid]) => pid), [9, 8, 1]);
  assert.deepEqual(clientProcessOf(lineage), [8, 'c', 'claude']);
  const current = { bootId: 'boot-1', pidNs: 'pid:[1]' };
  const recorded = { pid: 10, started: 'a', bootId: 'boot-1', pidNs: 'pid:[1]' };
  assert.equal(processEnded(recorded, table, current), false);
  assert.equal(processEnded({ ...recorded, started: 'reused' }, table, current), true, 'a reused pid');
  assert.equal(processEnded({ ...recorded, pid: 4242 }, table, current), true, 'gone');
  assert.equal(processEnded({ ...recorded, bootId: 'boot-0' }, table, current), true, 'a reboot');
  assert.equal(processEnded({ ...recorded, pid: 4242, pidNs: 'pid:[2]' }, table, current), false, 'another namespace counts as running');
  assert.equal(processEnded({ ...recorded, pid: 4242 }, fakeTable([], false), current), false, 'an unreadable table declares nothing gone');
  const zombie = fakeTable([{ pid: 10, ppid: 9, started: 'a', state: 'Z', name: 'node' }]);
  assert.equal(processEnded(recorded, zombie, current), true);
});

test('the ps fallback reads the real process table, and a ps that hangs tells nothing', async () => {
  const { PsTable } = await import('../../src/adapters/procs.js');
  const real = new PsTable(5_000).get(process.pid);
  assert.equal(real?.pid, process.pid);
  assert.equal(real?.ppid, process.ppid);
  assert.match(real?.started ?? '', /^\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4}$/);
  assert.equal(new PsTable(5_000).get(2 ** 22 + 12345), null, 'a pid nobody has');
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const bin = mkdtempSync(join(tmpdir(), 'agent-bus-ps-'));
  const path = process.env.PATH;
  try {
    writeFileSync(join(bin, 'ps'), '#!/bin/sh\nsleep 5\n', { mode: 0o755 });
    process.env.PATH = `${bin}:${path ?? ''}`;
    const started = Date.now();
    assert.equal(new PsTable(200).get(process.pid), undefined);
    assert.ok(Date.now() - started < 3_000, 'AGENT_BUS_PROCESS_LOOKUP_TIMEOUT bounds the wait');
  } finally {
    process.env.PATH = path;
    rmSync(bin, { recursive: true, force: true });
  }
});

test('the ps fallback sees processes that started after its first look', async () => {
  const { PsTable } = await import('../../src/adapters/procs.js');
  const { spawn } = await import('node:child_process');
  const table = new PsTable(5_000);
  assert.ok(table.get(process.pid));
  const child = spawn('sleep', ['10']);
  try {
    await new Promise((resolve) => setTimeout(resolve, PsTable.MAX_AGE_MS + 200));
    assert.equal(table.get(child.pid as number)?.pid, child.pid);
  } finally {
    child.kill();
  }
});

test('hub sessions: one session id is one session whatever process; live while heard from; the call metadata that names it', () => {
  const hubRow = (name: string, sessionKey: string, lastSeen = formatStamp(NOW)) => row(name, { sessionKey, bootId: HUB_SESSION_BOOT_ID, serverPid: 0, lineage: '[]', lastSeen });
  const hubStarter = (sessionKey: string) => me({ clientProcess: null, sessionKey });
  const rows = [hubRow('repo/claude-1', 'conv-a'), row('repo/claude-2', { sessionKey: 'conv-local' })];
  assert.equal(decideSessionStart(rows, [], hubStarter('conv-a'), context).name, 'repo/claude-1', 'the same session id at another hub');
  assert.equal(decideSessionStart(rows, [], hubStarter('conv-local'), context).name, 'repo/claude-2', 'a local session\'s id seen over the hub');
  assert.equal(decideSessionStart(rows, [], hubStarter('conv-b'), context).name, 'repo/claude-3');
  // Two local servers of different client processes are not one session for sharing an id.
  assert.equal(decideSessionStart([row('repo/claude-1', { sessionKey: 'same' })], [], me({ sessionKey: 'same' }), context).name, 'repo/claude-2');
  assert.equal(hubSessionLive(hubRow('repo/claude-1', 'a', minutesAgo(29)), NOW, 30), true);
  assert.equal(hubSessionLive(hubRow('repo/claude-1', 'a', minutesAgo(31)), NOW, 30), false);
  assert.equal(hubSessionLive({ ...hubRow('repo/claude-1', 'a'), endedAt: formatStamp(NOW) }, NOW, 30), false);
  assert.equal(callSessionKey({ 'x-codex-turn-metadata': { thread_id: 't-1', session_id: 't-1' } }), 't-1');
  assert.equal(callSessionKey({ threadId: ' t-2 ' }), 't-2');
  assert.equal(callSessionKey({ 'claudecode/toolUseId': 'toolu_1', progressToken: 2 }), null, 'what Claude Code sends names no session');
  assert.equal(callSessionKey({ threadId: 'x'.repeat(201) }), null);
  assert.equal(callSessionKey(undefined), null);
});

test('a hub reads a token\'s session rows beside its check only once it knows the token, and keeps them only for the agent the check names', async () => {
  const reads: string[] = [];
  const bus = { sessions: { rows: (agent: string) => (reads.push(agent), Promise.resolve([])) } } as unknown as Bus;
  const ahead = new SessionsReadAhead(bus, {});
  const token = (tokenId: string, agent: string) => ({ tokenId, agent }) as TokenRecord;
  const presented = `abt_${'a'.repeat(16)}_${'b'.repeat(43)}`;
  assert.equal(ahead.start(presented), null, 'a token never checked here: nothing read');
  assert.equal(ahead.checked(token('a'.repeat(16), 'shop/codex'), null), null);
  const read = ahead.start(presented);
  assert.equal(read?.agent, 'shop/codex');
  assert.deepEqual(reads, ['shop/codex']);
  assert.equal(ahead.checked(token('a'.repeat(16), 'shop/codex'), read), read, 'the same agent: kept');
  assert.equal(ahead.checked(token('a'.repeat(16), 'lab/claude'), read), null, 'another agent: dropped');
  assert.equal(ahead.start('not a token'), null);
  ahead.checked(token('c'.repeat(16), 'shop/claude-docs'), null);
  assert.equal(ahead.start(`abt_${'c'.repeat(16)}_${'b'.repeat(43)}`), null, 'a name with no sessions: nothing to read');
  assert.equal(new SessionsReadAhead(bus, { AGENT_BUS_SESSIONS: '0' }).start(presented), null);
});
