/**
 * Reliability: the world failing under the bus. A corrupt, locked or full database; a brain feed
 * that never answers; PostgreSQL stopped mid-run and started again; a hub killed mid-request.
 * Hooks stay silent (exit 0, one line at most) and quick; the CLI says what is wrong in one line;
 * servers recover on their own; nothing acknowledged is lost.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, ON_POSTGRES, ROOT, runCli, tempBus } from '../helpers/bus-env.js';
import { createToken, rawCall, startHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { noSmallDisk, onSmallDisk } from '../helpers/small-disk.js';
import { pausePostgres, resumePostgres, startPostgres, stopPostgres } from '../../scripts/postgres.mjs';
import { figure } from './report.js';
import { sleep, waitUntil } from '../helpers/wait.js';

const STACK_TRACE = /\n\s+at .+[(:]\d+/;
const SQLITE_ONLY = ON_POSTGRES ? 'a SQLite file fault: the PostgreSQL pass has its own below' : false;

function hook(env: NodeJS.ProcessEnv, name = 'hook-user-prompt'): { code: number | null; stdout: string; stderr: string; ms: number } {
  const started = Date.now();
  const result = spawnSync(process.execPath, [CLI, name, '--client', 'claude'], { env, cwd: env.HOME, input: JSON.stringify({ session_id: 's-1', cwd: env.HOME }), encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, ms: Date.now() - started };
}

function oneLine(text: string): boolean {
  return text.trim().split('\n').length === 1 && !STACK_TRACE.test(text);
}

test('a corrupt database: the CLI says so in one line, a hook exits 0, the MCP server refuses cleanly', { skip: SQLITE_ONLY }, async () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    writeFileSync(bus.db, Buffer.alloc(64 * 1024, 0x5a));
    rmSync(`${bus.db}-wal`, { force: true });
    rmSync(`${bus.db}-shm`, { force: true });
    const cli = runCli(['send', 'after', '--to', 'me', '--name', 'me'], { env: bus.env });
    assert.equal(cli.code, 1);
    assert.ok(oneLine(cli.stderr), cli.stderr);
    const hooked = hook({ ...bus.env, AGENT_BUS_NAME: 'me' });
    assert.equal(hooked.code, 0);
    assert.ok(hooked.stderr === '' || oneLine(hooked.stderr), hooked.stderr);
    const server = spawnSync(process.execPath, [CLI, 'serve'], { env: { ...bus.env, AGENT_BUS_NAME: 'me' }, input: '', encoding: 'utf8', timeout: 15_000 });
    assert.notEqual(server.signal, 'SIGTERM', 'the server did not hang');
    assert.doesNotMatch(server.stderr, STACK_TRACE);
    figure('corrupt-database', { cli_exit: cli.code, hook_exit: hooked.code, server_exit: server.status });
  } finally {
    bus.cleanup();
  }
});

test('a database locked past AGENT_BUS_BUSY_TIMEOUT: the CLI says so and that nothing was sent; a hook exits 0; unlocked, all works', { skip: SQLITE_ONLY }, async () => {
  const bus = tempBus({ AGENT_BUS_BUSY_TIMEOUT: '0.5' });
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    const before = bus.rows<{ n: number }>('SELECT COUNT(*) AS n FROM messages')[0]?.n;
    // Another process takes the write lock and holds it.
    const holder = spawn(
      process.execPath,
      ['--import', 'tsx', '-e', `const { connectSqlite } = require('./src/store/sqlite/driver.ts'); const db = connectSqlite(${JSON.stringify(bus.db)}); db.exec('BEGIN IMMEDIATE'); process.stdout.write('held\\n'); setTimeout(() => db.exec('COMMIT'), 60000);`],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise((resolve) => holder.stdout.once('data', resolve));
      const started = Date.now();
      const cli = runCli(['send', 'while locked', '--to', 'me', '--name', 'me'], { env: bus.env });
      const waited = Date.now() - started;
      assert.equal(cli.code, 1);
      assert.match(cli.stderr, /^agent-bus: the bus database stayed locked by another process .*AGENT_BUS_BUSY_TIMEOUT.*nothing was written and nothing was sent/);
      assert.ok(oneLine(cli.stderr));
      const hooked = hook({ ...bus.env, AGENT_BUS_NAME: 'me' }, 'hook-stop');
      assert.equal(hooked.code, 0, hooked.stderr);
      figure('locked-database', { cli_exit: cli.code, cli_waited_ms: waited, hook_exit: hooked.code, hook_ms: hooked.ms });
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('close', resolve));
    }
    assert.equal(bus.rows<{ n: number }>('SELECT COUNT(*) AS n FROM messages')[0]?.n, before, 'nothing was written');
    assert.equal(runCli(['send', 'unlocked', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
  } finally {
    bus.cleanup();
  }
});

test('a full disk under a running MCP server: its send is an error saying so, it keeps serving, and with room again it sends', { skip: noSmallDisk }, onSmallDisk(async (env, disk) => {
  assert.equal(runCli(['send', 'joining', '--to', 'me', '--name', 'me'], { env }).code, 0);
  const server = await connect({ ...env, AGENT_BUS_NAME: 'me' });
  const filler = join(disk.dir, 'filler');
  try {
    const block = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) appendFileSync(filler, block);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    }
    // Enough bodies to need new pages: the first that cannot get one says so.
    let refusal = '';
    for (let index = 0; index < 50 && refusal === ''; index++) {
      const result = await server.client.callTool({ name: 'send_message', arguments: { to: 'me', body: `${'x'.repeat(4000)} ${index}` } });
      if (result.isError) refusal = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    }
    assert.match(refusal, /full.*nothing was sent/i);
    rmSync(filler);
    const after = await server.call<{ message_ids: string[] }>('send_message', { to: 'me', body: 'room again' });
    assert.equal(after.message_ids.length, 1, 'the same server sends once there is room');
    figure('full-disk', { refused: true, recovered: true });
  } finally {
    rmSync(filler, { force: true });
    await server.close();
  }
}));

test('a brain feed that accepts and never answers: refresh gives up within BRAIN_HTTP_TIMEOUT with one line; a hook stays quick', async () => {
  const sockets = new Set<import('node:net').Socket>();
  const hanging: Server = createServer(() => undefined);
  hanging.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const port = (hanging.address() as { port: number }).port;
  const bus = tempBus({ BRAIN_ENABLED: '1', BRAIN_URL: `http://127.0.0.1:${port}`, BRAIN_HTTP_TIMEOUT: '1' });
  try {
    const started = Date.now();
    const refresh = runCli(['brain', 'refresh'], { env: bus.env });
    const refreshMs = Date.now() - started;
    assert.equal(refresh.code, 1);
    assert.ok(oneLine(refresh.stderr), refresh.stderr);
    assert.ok(refreshMs < 10_000, `${refreshMs} ms`);
    const hooked = hook({ ...bus.env, AGENT_BUS_NAME: 'me' }, 'hook-session-start');
    assert.equal(hooked.code, 0);
    assert.ok(hooked.ms < 10_000, `${hooked.ms} ms`);
    figure('hanging-brain-feed', { refresh_exit: refresh.code, refresh_ms: refreshMs, hook_exit: hooked.code, hook_ms: hooked.ms });
  } finally {
    bus.cleanup();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => hanging.close(resolve));
  }
});

test('a hub killed mid-request: every send it acknowledged is stored', { timeout: 120_000 }, async () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'joining', '--to', 'sink', '--name', 'sink'], { env: bus.env }).code, 0);
    const hub = await startHub(bus);
    const { token } = createToken(bus, 'shop/codex');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const acknowledged: string[] = [];
    let failed = 0;
    let stop = false;
    const loop = async (lane: number): Promise<void> => {
      for (let index = 0; !stop; index++) {
        try {
          const response = await rawCall(hub.url, headers, { jsonrpc: '2.0', id: index, method: 'tools/call', params: { name: 'send_message', arguments: { to: 'sink', body: `lane ${lane} #${index}` } } });
          const text = await response.text();
          const payload = JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as { result?: { isError?: boolean; content: Array<{ text: string }> } };
          if (response.status === 200 && payload.result && !payload.result.isError) acknowledged.push(...(JSON.parse(payload.result.content[0]?.text ?? '{}') as { message_ids: string[] }).message_ids);
        } catch {
          failed += 1;
          if (stop) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const lanes = Array.from({ length: 4 }, (_, lane) => loop(lane));
    // Sends flowing for a while, and past the few the check below needs however slow the machine is.
    await sleep(800);
    await waitUntil(() => acknowledged.length > 10, 'sends to go through before the kill', 20_000, 20);
    hub.process.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(lanes);
    const stored = new Set(bus.rows<{ message_id: string }>("SELECT message_id FROM messages WHERE to_agent = 'sink'").map((row) => row.message_id));
    const lost = acknowledged.filter((id) => !stored.has(id)).length;
    figure('hub-killed', { acknowledged: acknowledged.length, failed_after_kill: failed, stored: stored.size, lost });
    assert.ok(acknowledged.length > 10, 'sends went through before the kill');
    assert.equal(lost, 0, 'nothing acknowledged was lost');
  } finally {
    bus.cleanup();
  }
});

test('PostgreSQL stopped mid-run and started again: hooks stay silent and quick, the CLI and a running MCP server recover without a restart', { timeout: 180_000 }, async () => {
  const server = await startPostgres();
  const bus = tempBus({ AGENT_BUS_PG_CONNECT_TIMEOUT: '1' }, { engine: 'postgres' });
  // The throwaway server above, not the suite's: this test stops it.
  bus.env.AGENT_BUS_DB = server.url;
  try {
    assert.equal(runCli(['send', 'before', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    const mcp = await connect({ ...bus.env, AGENT_BUS_NAME: 'me' });
    try {
      await mcp.call('send_message', { to: 'me', body: 'from the server, before' });
      pausePostgres(server.dir, server.bin);
      const hooked = hook({ ...bus.env, AGENT_BUS_NAME: 'me' }, 'hook-stop');
      assert.equal(hooked.code, 0);
      assert.equal(hooked.stdout.trim() === '' || /^\{/.test(hooked.stdout.trim()), true, 'the hook prints its dialect\'s nothing at most');
      assert.ok(hooked.ms < 8_000, `the hook took ${hooked.ms} ms`);
      const cli = runCli(['send', 'while down', '--to', 'me', '--name', 'me'], { env: bus.env });
      assert.notEqual(cli.code, 0);
      assert.ok(oneLine(cli.stderr), cli.stderr);
      const refused = await mcp.client.callTool({ name: 'send_message', arguments: { to: 'me', body: 'while down' } });
      assert.equal(refused.isError, true, 'the tool says the store is away');
      resumePostgres(server.dir, server.bin);
      assert.equal(runCli(['send', 'after', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0, 'the CLI works again');
      let recovered = false;
      for (let attempt = 0; attempt < 20 && !recovered; attempt++) {
        const result = await mcp.client.callTool({ name: 'send_message', arguments: { to: 'me', body: 'from the server, after' } });
        recovered = result.isError !== true;
        if (!recovered) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.ok(recovered, `the running MCP server sends again: ${mcp.stderr()}`);
      figure('postgres-restarted', { hook_exit: hooked.code, hook_ms: hooked.ms, cli_exit_while_down: cli.code, server_recovered: recovered });
    } finally {
      await mcp.close();
    }
  } finally {
    bus.cleanup();
    stopPostgres(server.dir, server.bin);
  }
});

test('a read-only database: the CLI says so and that nothing was sent, a hook exits 0, an MCP server refuses to start saying why', { skip: noSmallDisk }, onSmallDisk((env, disk) => {
  assert.equal(runCli(['send', 'joining', '--to', 'me', '--name', 'me'], { env }).code, 0);
  disk.readOnly();
  const cli = runCli(['send', 'after', '--to', 'me', '--name', 'me'], { env });
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /read-only.*nothing was sent/i);
  assert.ok(oneLine(cli.stderr), cli.stderr);
  const hooked = hook({ ...env, AGENT_BUS_NAME: 'me' });
  assert.equal(hooked.code, 0);
  const server = spawnSync(process.execPath, [CLI, 'serve'], { env: { ...env, AGENT_BUS_NAME: 'me' }, input: '', encoding: 'utf8', timeout: 15_000 });
  assert.notEqual(server.status, 0);
  assert.match(server.stderr, /^agent-bus: the database at .* is read-only \(it is on a read-only file system\): nothing was written and nothing was sent\n$/);
  figure('read-only-database', { cli_exit: cli.code, hook_exit: hooked.code, server_exit: server.status });
}));
