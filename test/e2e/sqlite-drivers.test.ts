/**
 * One database file used by both SQLite drivers at once: an MCP server on one driver and the hooks
 * and CLI on the other (on one Node.js that has both, or on this one and the other Node.js CI names),
 * sending and reading across. Nothing is lost, and the file's integrity holds.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { availableSqliteDrivers, connectSqlite, type SqliteDriverName } from '../../src/store/sqlite/driver.js';
import { CLI, json, runCli, tempBus } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';

interface Side {
  node: string;
  driver: SqliteDriverName;
}

/** The drivers a Node.js binary can use, asked of it. */
function driversOf(node: string): SqliteDriverName[] {
  const script = `import('${new URL('../../src/store/sqlite/driver.ts', import.meta.url).href}').then((m) => console.log(m.availableSqliteDrivers().join(',')))`;
  const result = spawnSync(node, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
  return result.status === 0 ? (result.stdout.trim().split(',').filter(Boolean) as SqliteDriverName[]) : [];
}

/** Two sides on different drivers, or null when this machine cannot run both. */
function twoSides(): [Side, Side] | null {
  const here = availableSqliteDrivers();
  if (here.includes('builtin') && here.includes('better-sqlite3')) return [{ node: process.execPath, driver: 'builtin' }, { node: process.execPath, driver: 'better-sqlite3' }];
  const other = process.env.AGENT_BUS_TEST_OTHER_NODE ?? '';
  if (other === '' || !existsSync(other)) return null;
  const there = driversOf(other);
  for (const mine of here) {
    const theirs = there.find((driver) => driver !== mine);
    if (theirs !== undefined) return [{ node: other, driver: theirs }, { node: process.execPath, driver: mine }];
  }
  return null;
}

const sides = twoSides();

/** Run a command of the CLI on `side`, without waiting on it. */
function cliOn(side: Side, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(side.node, [CLI, ...args], { env: { ...env, AGENT_BUS_SQLITE_DRIVER: side.driver } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

test('an MCP server on one SQLite driver and hooks and the CLI on the other share one bus at once: nothing lost, integrity ok', { skip: sides === null ? 'needs both SQLite drivers: Node.js 22 or 24 with the addon built, or AGENT_BUS_TEST_OTHER_NODE' : false, timeout: 180_000 }, async () => {
  const [server, hooks] = sides as [Side, Side];
  const bus = tempBus();
  const COUNT = 40;
  try {
    const alphaEnv = { ...bus.env, AGENT_BUS_NAME: 'shop/codex', AGENT_BUS_SQLITE_DRIVER: server.driver };
    const betaEnv = { ...bus.env, AGENT_BUS_NAME: 'shop/claude' };
    // beta on the roster (through the hooks' driver), so mail to it is accepted.
    assert.equal((await cliOn(hooks, ['send', 'joining', '--to', 'shop/claude'], betaEnv)).code, 0);
    assert.equal((await cliOn(hooks, ['inbox'], betaEnv)).code, 0);
    const alpha = await connect(alphaEnv, { node: server.node });
    try {
      const fromServer = Array.from({ length: COUNT }, (_, index) => `from the server ${index}`);
      const fromCli = Array.from({ length: COUNT }, (_, index) => `from the cli ${index}`);
      const seenByHooks: string[] = [];
      let serverSending = true;
      // The server sends while beta's hooks take mail and beta's CLI sends back, all at once.
      const serverSends = (async () => {
        for (const body of fromServer) await alpha.call('send_message', { to: 'shop/claude', body });
        serverSending = false;
      })();
      const hookTurns = (async () => {
        for (;;) {
          const more = serverSending;
          const turn = await cliOn(hooks, ['hook-user-prompt', '--client', 'claude'], betaEnv, JSON.stringify({ session_id: 'beta-session', hook_event_name: 'UserPromptSubmit', prompt: 'go on' }));
          assert.equal(turn.code, 0, turn.stderr);
          assert.equal(turn.stderr, '', 'a hook writes nothing to stderr');
          const found = fromServer.filter((body) => turn.stdout.includes(body) && !seenByHooks.includes(body));
          seenByHooks.push(...found);
          if (!more && found.length === 0) break;
        }
      })();
      const cliSends = (async () => {
        for (const body of fromCli) {
          const sent = await cliOn(hooks, ['send', body, '--to', 'shop/codex'], betaEnv);
          assert.equal(sent.code, 0, sent.stderr);
        }
      })();
      await Promise.all([serverSends, hookTurns, cliSends]);
      assert.deepEqual([...seenByHooks].sort(), [...fromServer].sort(), 'every message the server sent reached a hook, once');
      const read: string[] = [];
      for (let page = 0; page < 10 && read.length < COUNT; page++) read.push(...(await alpha.call<Array<{ body: string }>>('read_inbox')).map((message) => message.body));
      assert.deepEqual(read.filter((body) => body.startsWith('from the cli')).sort(), [...fromCli].sort(), 'every message the CLI sent reached the server');
    } finally {
      await alpha.close();
    }
    // Both drivers read the file as whole, and the audit log accounts for every send.
    for (const driver of [server.driver, hooks.driver]) {
      if (!availableSqliteDrivers().includes(driver)) continue;
      const db = connectSqlite(bus.db, { readonly: true, driver });
      try {
        assert.deepEqual(db.pragmaRows<{ integrity_check: string }>('integrity_check'), [{ integrity_check: 'ok' }]);
        assert.equal(db.get<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE body LIKE 'from the %'")?.n, 2 * COUNT);
      } finally {
        db.close();
      }
    }
    const verified = json<{ ok: boolean }>(runCli(['audit', 'verify', '--json'], { env: bus.env }));
    assert.equal(verified.ok, true);
  } finally {
    bus.cleanup();
  }
});
