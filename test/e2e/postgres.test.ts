/**
 * PostgreSQL as the store, seen from outside: what a postgres:// URL selects,
 * where the rows land, what a user sees when the server cannot be reached
 * (the CLI, every hook, the status line, the watcher, the MCP server), and
 * that no password is ever shown or audited.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, databaseUrl, psql, readAudit, runCli, tempBus, messageLines } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { agentEnv, register } from '../helpers/agents.js';
import { sleep, waitUntil } from '../helpers/wait.js';

const HOOKS = ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool'];

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server that accepts connections and never says a word: a PostgreSQL that hangs. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => sockets.add(socket));
  const port = await listen(server);
  return {
    port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function offlineEnv(port: number): NodeJS.ProcessEnv {
  const bus = tempBus();
  return { ...bus.env, AGENT_BUS_DB: `postgres://bob:TOPSECRET@127.0.0.1:${port}/bus`, AGENT_BUS_HOME: bus.folder, AGENT_BUS_PG_CONNECT_TIMEOUT: '0.5' };
}

test('a postgres:// URL stores the bus in that database: the rows are there, and no SQLite file is written', () => {
  const bus = tempBus({}, { engine: 'postgres' });
  try {
    const self = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop' };
    assert.equal(runCli(['send', 'joining', '--to', 'shop/claude'], { env: self }).code, 0);
    const sent = runCli(['send', 'stored in postgres', '--to', 'shop/claude'], { env: bus.env });
    assert.equal(sent.code, 0, sent.stderr);
    assert.deepEqual(bus.rows("SELECT to_agent, body FROM messages WHERE body = 'stored in postgres'"), [{ to_agent: 'shop/claude', body: 'stored in postgres' }]);
    assert.deepEqual(bus.rows("SELECT name FROM agents ORDER BY name").map((row) => (row as { name: string }).name), ['human', 'shop/claude']);
    const read = runCli(['inbox', '--name', 'shop/claude', '--json'], { env: bus.env });
    assert.equal(read.code, 0, read.stderr);
    assert.equal(bus.rows("SELECT read_at FROM messages WHERE body = 'stored in postgres' AND read_at IS NOT NULL").length, 1, 'the read was recorded there too');
    assert.equal(existsSync(join(bus.folder, 'bus.db')), false);
    assert.equal(existsSync(join(bus.env.HOME as string, '.claude-agent-bus', 'bus.db')), false);
  } finally {
    bus.cleanup();
  }
});

test('an unreachable server: the CLI says host and port in one line and exits 1; never the password', async () => {
  const port = await closedPort();
  const env = offlineEnv(port);
  for (const args of [['agents'], ['send', 'hi'], ['inbox'], ['tail', '--limit', '1'], ['channel', 'list']]) {
    const result = runCli(args, { env });
    if (args[0] === 'tail') continue; // The audit log is a file: tail needs no database.
    assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(result.stderr, `agent-bus: cannot reach PostgreSQL at 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`, args.join(' '));
    assert.ok(!`${result.stdout}${result.stderr}`.includes('TOPSECRET'));
  }
  const hanging = await silentServer();
  try {
    const started = Date.now();
    const result = runCli(['agents'], { env: { ...env, AGENT_BUS_DB: `postgres://bob:TOPSECRET@127.0.0.1:${hanging.port}/bus` } });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, `agent-bus: cannot reach PostgreSQL at 127.0.0.1:${hanging.port}: no answer in time (AGENT_BUS_PG_CONNECT_TIMEOUT)\n`);
    assert.ok(Date.now() - started < 10_000, 'it gives up after the connect timeout');
  } finally {
    await hanging.close();
  }
});

test('an unreachable server: every hook exits 0 and prints nothing for the model, within its budget; the status line and the watcher too', async () => {
  const hanging = await silentServer();
  try {
    const env = { ...offlineEnv(hanging.port), AGENT_BUS_NAME: 'shop/claude' };
    for (const hook of HOOKS) {
      const started = Date.now();
      const result = spawnSync(process.execPath, [CLI, hook, '--client', 'claude'], { env, input: '{"session_id":"s-1"}', encoding: 'utf8', timeout: 20_000 });
      const elapsed = Date.now() - started;
      assert.equal(result.status, 0, `${hook}: ${result.stderr}`);
      assert.equal(result.stdout, hook === 'hook-pre-tool' || hook === 'hook-session-start' ? result.stdout : '', hook);
      assert.doesNotMatch(result.stdout, /agent-bus|PostgreSQL/, `${hook} shows the model nothing of it`);
      assert.match(result.stderr, /^agent-bus hook: cannot reach PostgreSQL at 127\.0\.0\.1:\d+: no answer in time/, hook);
      assert.ok(elapsed < 8000, `${hook} gave up within its budget (${elapsed} ms)`);
      assert.ok(!result.stderr.includes('TOPSECRET'));
    }
    const status = spawnSync(process.execPath, [CLI, 'statusline', '--client', 'claude'], { env, input: '{}', encoding: 'utf8', timeout: 20_000 });
    assert.equal(status.status, 0);
    assert.equal(status.stdout, 'bus (store unreachable)\n');
    const watcher = spawnSync(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '5'], {
      env: { ...env, CLAUDE_CODE_ENTRYPOINT: 'cli' },
      input: '{"session_id":"s-1"}',
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(watcher.status, 0, watcher.stderr);
    assert.equal(watcher.stdout, '');
  } finally {
    await hanging.close();
  }
});

test('the MCP server starts with its store down, says so in whoami, and serves again once the server is back', async () => {
  const real = new URL(process.env.AGENT_BUS_TEST_PG_URL ?? '');
  const bus = tempBus({}, { engine: 'postgres' });
  // A port in front of the test server that we open and shut: the store "goes down" and "comes back".
  const sockets = new Set<import('node:net').Socket>();
  let up = false;
  const proxy = createServer((client) => {
    sockets.add(client);
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect(Number(real.port), real.hostname);
    sockets.add(upstream);
    client.pipe(upstream).pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  const port = await listen(proxy);
  const url = new URL(bus.db);
  url.port = String(port);
  url.password = 'TOPSECRET';
  const env = { ...bus.env, AGENT_BUS_DB: url.toString(), AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop', AGENT_BUS_PG_CONNECT_TIMEOUT: '1' };
  const server = await connect(env);
  try {
    const down = await server.call<{ name: string; warnings: string[] }>('whoami');
    assert.equal(down.name, 'shop/claude', 'who it is comes from its config');
    assert.ok(down.warnings.some((warning) => /^cannot reach PostgreSQL at 127\.0\.0\.1:\d+: .*; every call tries again$/.test(warning)), JSON.stringify(down.warnings));
    assert.match(await server.fails('send_message', { to: '*', body: 'while down' }), /cannot reach PostgreSQL at 127\.0\.0\.1:\d+/);
    up = true;
    const back = await server.call<{ name: string; warnings: string[] }>('whoami');
    assert.ok(!back.warnings.some((warning) => warning.includes('cannot reach')), JSON.stringify(back.warnings));
    assert.match(back.name, /^shop\/claude(-\d+)?$/, 'the session is claimed once the store is back');
    const sent = await server.call<{ recipients: string[] }>('send_message', { to: '*', body: 'once it is back' });
    assert.deepEqual(sent.recipients, []);
    assert.equal(bus.rows('SELECT name FROM agents WHERE name = \'shop/claude\'').length, 1, 'registered in the database');
    const said = `${server.stderr()}${readFileSync(bus.audit, 'utf8')}`;
    assert.ok(!said.includes('TOPSECRET'), 'the password is in neither the log nor the audit');
  } finally {
    await server.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    bus.cleanup();
  }
});

test("TLS follows the URL's sslmode: require against a server without TLS is refused, and says so", () => {
  const bus = tempBus({}, { engine: 'postgres' });
  try {
    const url = new URL(bus.db);
    url.searchParams.set('sslmode', 'require');
    const result = runCli(['agents'], { env: { ...bus.env, AGENT_BUS_DB: url.toString() } });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^agent-bus: cannot reach PostgreSQL at 127\.0\.0\.1:\d+: The server does not support SSL connections\n$/);
    const plain = runCli(['agents', '--json'], { env: bus.env });
    assert.equal(plain.code, 0, plain.stderr);
  } finally {
    bus.cleanup();
  }
});

test('the audit rows of a PostgreSQL bus carry no part of the URL', () => {
  const bus = tempBus({}, { engine: 'postgres' });
  try {
    const url = new URL(bus.db);
    url.password = 'TOPSECRET';
    const env = { ...bus.env, AGENT_BUS_DB: url.toString() };
    assert.equal(runCli(['send', 'hi'], { env }).code, 0);
    assert.equal(runCli(['channel', 'publish', 'ops', 'a notice'], { env }).code, 0);
    const audit = readFileSync(bus.audit, 'utf8');
    assert.ok(readAudit(bus.audit).length > 0);
    assert.ok(!audit.includes('TOPSECRET') && !audit.includes('postgres://'));
  } finally {
    bus.cleanup();
  }
});

test("a watcher whose LISTEN connection is cut reconnects, listens again, and still wakes at once on mail", async () => {
  const bus = tempBus({}, { engine: 'postgres' });
  try {
    const self = agentEnv(bus, 'shop/claude', '/repos/shop');
    register(self);
    // A 60-second poll: only a notification can wake it fast.
    const watcher = spawn(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '60'], {
      env: { ...self, CLAUDE_CODE_ENTRYPOINT: 'cli', AGENT_BUS_WATCH_POLL_SECONDS: '60' },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let said = '';
    watcher.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => watcher.on('close', resolve));
    watcher.stdin.end('{"session_id":"s-1"}');
    const listeners = (): number[] =>
      bus.rows<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN agent_bus'").map((row) => row.pid);
    const until = (what: string, ready: () => boolean): Promise<void> => waitUntil(ready, what, 10_000, 50);
    await until('the watcher to listen', () => listeners().length === 1 && bus.rows('SELECT session FROM watchers').length === 1);
    const [first] = listeners();
    bus.rows(`SELECT pg_terminate_backend(${first})`);
    await until('the watcher to listen again', () => listeners().length === 1 && listeners()[0] !== first);
    const sentAt = Date.now();
    assert.equal(runCli(['send', 'after the reconnect', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    assert.equal(await exited, 10, said);
    assert.ok(Date.now() - sentAt < 5000, 'woken by the notification, not by the 60-second poll');
    assert.match(said, /after the reconnect/);
  } finally {
    bus.cleanup();
  }
});

test('a role that logs in with a password (SCRAM), set up as the README says: the bus migrates its own database and works; a wrong password is refused in one line that never shows it', (t) => {
  const admin = databaseUrl('postgres');
  const asks = psql(admin, "SELECT COUNT(*) FROM pg_hba_file_rules WHERE '+agent_bus_password' = ANY(user_name) AND auth_method = 'scram-sha-256'").trim();
  if (asks === '0') {
    // The server scripts/postgres.mjs starts (the suite's own) always has the rule; a server named by
    // AGENT_BUS_TEST_PG_URL may not, and then no role of it can be asked for a password.
    t.skip("the server's pg_hba.conf has no scram-sha-256 rule for +agent_bus_password (SELECT * FROM pg_hba_file_rules), so it asks no password");
    return;
  }
  const suffix = Math.random().toString(36).slice(2, 10);
  const role = `agent_bus_pw_${suffix}`;
  const password = `Pw${suffix}Secret`;
  psql(admin, "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agent_bus_password') THEN CREATE ROLE agent_bus_password NOLOGIN; END IF; END $$");
  psql(admin, `CREATE ROLE ${role} LOGIN PASSWORD '${password}' IN ROLE agent_bus_password`);
  psql(admin, `CREATE DATABASE ${role} OWNER ${role}`);
  const home = tempBus();
  try {
    const server = new URL(admin);
    const url = `postgres://${role}:${password}@${server.host}/${role}`;
    const env = { ...home.env, AGENT_BUS_DB: url, AGENT_BUS_HOME: home.folder, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop' };
    const sent = runCli(['send', 'over a password', '--to', 'shop/claude'], { env });
    assert.equal(sent.code, 0, sent.stderr);
    const read = runCli(['inbox', '--json'], { env });
    assert.equal(read.code, 0, read.stderr);
    assert.match(read.stdout, /over a password/);
    const bus = databaseUrl(role);
    assert.equal(psql(bus, "SELECT body FROM messages WHERE body = 'over a password'").trim(), 'over a password', 'the mail is in the role’s database');
    assert.equal(psql(bus, "SELECT tableowner FROM pg_tables WHERE tablename = 'messages'").trim(), role, 'the bus created its tables as that role');

    const refused = runCli(['inbox'], { env: { ...env, AGENT_BUS_DB: `postgres://${role}:Wrong${suffix}@${server.host}/${role}` } });
    assert.equal(refused.code, 1);
    assert.equal(messageLines(refused.stderr).length, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`^agent-bus: cannot log in to PostgreSQL at ${server.host}: password authentication failed for user "${role}"`));
    assert.doesNotMatch(refused.stderr + refused.stdout, new RegExp(`Wrong${suffix}|${password}`));
    // No password at all: what to give, and where.
    const asked = runCli(['inbox'], { env: { ...env, AGENT_BUS_DB: `postgres://${role}@${server.host}/${role}` } });
    assert.equal(asked.code, 1);
    assert.equal(asked.stderr.trim(), `agent-bus: cannot log in to PostgreSQL at ${server.host}: it asks user '${role}' for a password; give it in the URL, in PGPASSWORD or in ~/.pgpass`);
    // And a hook in that state stays out of its client's way.
    const hook = spawnSync(process.execPath, [CLI, 'hook-user-prompt', '--client', 'claude'], { env: { ...env, AGENT_BUS_DB: `postgres://${role}@${server.host}/${role}` }, input: '{}', encoding: 'utf8' });
    assert.equal(hook.status, 0, hook.stderr);
    assert.equal(hook.stdout, '');
    // The password in ~/.pgpass (private to the user, as libpq wants it), the URL without one.
    const pgpass = join(String(home.env.HOME), '.pgpass');
    writeFileSync(pgpass, `${server.hostname}:${server.port}:${role}:${role}:${password}\n`, { mode: 0o600 });
    const fromPgpass = runCli(['inbox', '--json'], { env: { ...env, AGENT_BUS_DB: `postgres://${role}@${server.host}/${role}` } });
    assert.equal(fromPgpass.code, 0, fromPgpass.stderr);
    for (const row of readAudit(home.audit)) assert.doesNotMatch(JSON.stringify(row), new RegExp(password));
  } finally {
    home.cleanup();
    psql(admin, `DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
    psql(admin, `DROP ROLE IF EXISTS ${role}`);
  }
});

test('tail -f shows a send whose transaction commits after a later one, once; a rolled-back one never', async () => {
  const bus = tempBus({}, { engine: 'postgres' });
  const { default: pg } = await import('pg');
  const held = new pg.Client({ connectionString: bus.env.AGENT_BUS_DB });
  const rolledBack = new pg.Client({ connectionString: bus.env.AGENT_BUS_DB });
  const follower = spawn(process.execPath, [CLI, 'tail', '-f', '--json', '--limit', '1'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const self = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop' };
    assert.equal(runCli(['send', 'joining', '--to', 'shop/claude'], { env: self }).code, 0);
    let out = '';
    follower.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const saw = (body: string): Promise<void> => waitUntil(() => out.includes(`"body_preview":"${body}"`), () => `'${body}'; got: ${out}`, 10_000, 50);
    // Ready: it has printed the last row, and follows from there.
    await waitUntil(() => out.includes('\n'), () => `tail -f to print the last row; got: ${out}`, 10_000, 50);
    await held.connect();
    await rolledBack.connect();
    // Two sends from another machine, still open: each takes its position now and shows at commit.
    const insert = (id: string, body: string): string =>
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) VALUES ('${id}', 'far/codex', 'shop/claude', '${body}', '${id}', '${new Date().toISOString()}')`;
    await held.query(`BEGIN; ${insert('m-held', 'committed late')}`);
    await rolledBack.query(`BEGIN; ${insert('m-gone', 'rolled back')}`);
    assert.equal(runCli(['send', 'sent after', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    await saw('sent after');
    await rolledBack.query('ROLLBACK');
    await held.query(`SELECT pg_notify('agent_bus', 'late'); COMMIT`);
    await saw('committed late');
    // Every later look at the store has had its chance to print either again. Nothing says when the
    // follower has looked since: a pause.
    await sleep(2_500);
    const bodies = out.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string; body_preview: string }).filter((row) => row.op === 'send' && row.body_preview !== 'joining').map((row) => row.body_preview);
    assert.deepEqual(bodies, ['sent after', 'committed late']);
  } finally {
    follower.kill('SIGINT');
    await held.end().catch(() => undefined);
    await rolledBack.end().catch(() => undefined);
    bus.cleanup();
  }
});
