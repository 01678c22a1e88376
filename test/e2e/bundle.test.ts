/** The shipped CLI bundle: each command carries a V8 code cache, and a bad or missing cache only costs speed. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.js';
import { ROOT, runCli, tempBus } from '../helpers/bus-env.js';
import { codeCachePath } from '../../src/adapters/bundles.js';
import { register } from '../helpers/agents.js';

const BIN = join(ROOT, 'dist', 'bin');

test('every command has its own bundle and code cache', () => {
  const files = new Set(readdirSync(join(BIN, 'commands')));
  for (const command of [...COMMANDS, { name: '_dispatch' }]) {
    assert.ok(files.has(`${command.name}.cjs`), `${command.name}.cjs`);
    // Named for the V8 that recorded it: this Node.js's, which built the bundle.
    const cache = codeCachePath(`${command.name}.cjs`);
    assert.ok(files.has(cache), cache);
  }
  // The launcher too: the file node runs (cli.cjs) is a few lines that load it with its cache.
  assert.ok(existsSync(codeCachePath(join(BIN, 'launcher.cjs'))), 'the launcher has its code cache');
  assert.ok(readFileSync(join(BIN, 'cli.cjs')).length < 4096, 'the file node runs is the launcher\'s loader alone');
});

test('a corrupt or missing code cache falls back to compiling the bundle', () => {
  // The copy stays inside the project so the bundle still finds node_modules.
  const copy = mkdtempSync(join(ROOT, 'dist', 'test-copy-'));
  const bus = tempBus();
  try {
    cpSync(BIN, copy, { recursive: true });
    const corrupt = codeCachePath(join(copy, 'commands', 'send.cjs'));
    const missing = codeCachePath(join(copy, 'commands', 'inbox.cjs'));
    writeFileSync(corrupt, Buffer.from('not a code cache at all'));
    rmSync(missing);
    const launcher = codeCachePath(join(copy, 'launcher.cjs'));
    rmSync(launcher);
    assert.ok(!existsSync(missing));
    const sent = spawnSync(process.execPath, [join(copy, 'cli.cjs'), 'send', 'cached?', '--to', 'alpha', '--name', 'alpha'], { env: bus.env, encoding: 'utf8' });
    assert.equal(sent.status, 0, sent.stderr);
    const read = spawnSync(process.execPath, [join(copy, 'cli.cjs'), 'inbox', '--name', 'alpha', '--json'], { env: bus.env, encoding: 'utf8' });
    assert.equal(read.status, 0, read.stderr);
    assert.equal((JSON.parse(read.stdout) as Array<{ body: string }>)[0]?.body, 'cached?');
    // A missing cache is recorded by the first run that goes well (as on a Node.js the build did not record one for);
    // one V8 refused is this version's, refused for a flag: it is left as it is, not written at every start.
    assert.ok(existsSync(missing), 'the run recorded the missing cache');
    assert.ok(existsSync(launcher), "the run recorded the launcher's missing cache");
    assert.notEqual(readFileSync(missing).length, 0);
    assert.equal(readFileSync(corrupt, 'utf8'), 'not a code cache at all');
    assert.deepEqual(readdirSync(join(copy, 'commands')).filter((name) => name.endsWith('.partial')), []);
    assert.deepEqual(readdirSync(copy).filter((name) => name.endsWith('.partial')), []);
  } finally {
    rmSync(copy, { recursive: true, force: true });
    bus.cleanup();
  }
});

/** The Bus's services no hook calls: tasks (beyond the reminder of held ones), webhooks in and out, tokens, the dashboard's pages, retention, the audit check. */
const BEYOND_HOOKS = ['Tasks', 'Integrations', 'OutboundDelivery', 'Overview', 'Tokens', 'Retention', 'AuditCheck', 'Health', 'Receipts'];

test("the hooks' bundles carry the store, the core and the dialects, nothing heavier", () => {
  for (const hook of ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool']) {
    const source = readFileSync(join(BIN, 'commands', `${hook}.cjs`), 'utf8');
    // The brain's YAML parser and HTTP client live in a bundle of their own, loaded only when a refresh is due.
    // Node's own http is loaded only by a remote hook, on first use (never a require at the top).
    for (const heavy of ['@modelcontextprotocol', 'zod', 'jsonc-parser', 'smol-toml', 'picocolors', 'require("node:http")', 'require("http")', 'undici', 'yaml/dist', 'YAMLParseError']) {
      assert.ok(!source.includes(heavy), `${hook} must not bundle ${heavy}`);
    }
    assert.ok(source.includes('INSERT INTO messages') || source.includes('FROM messages'), `${hook} bundles the store`);
    // A command's bundle carries its own spec, not every command's (demo's summary stands for the rest).
    assert.ok(!source.includes('A first look: mail sent'), `${hook} must not bundle the other commands' specs`);
    // The addon driver (better-sqlite3's JavaScript, by its constructor's parameter) is a bundle of its own.
    assert.ok(!source.includes('filenameGiven'), `${hook} must not bundle better-sqlite3`);
    // A hook composes what it calls of the bus (core/hook-bus.ts), not the whole Bus: none of the services it never calls.
    assert.ok(source.includes('HookBus=class') && !/\bBus=class/.test(source), `${hook} composes the hook's bus alone`);
    for (const service of BEYOND_HOOKS) assert.ok(!source.includes(`${service}=class`), `${hook} must not bundle ${service}`);
    for (const text of ['No task was made', 'x-hub-signature-256', 'takes no token']) assert.ok(!source.includes(text), `${hook} must not bundle the code that says ${text}`);
  }
  // The markers mean what they say: a command that runs the whole bus carries each.
  const whole = readFileSync(join(BIN, 'commands', 'task.cjs'), 'utf8');
  for (const service of BEYOND_HOOKS) assert.ok(whole.includes(`${service}=class`), `task.cjs bundles ${service}`);
  for (const text of ['No task was made', 'x-hub-signature-256', 'takes no token']) assert.ok(whole.includes(text), `task.cjs bundles ${text}`);
  // Where better-sqlite3 is installed (an optional dependency), its driver has a bundle of its own; where not, none is built.
  if (existsSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'))) {
    assert.ok(readFileSync(join(BIN, 'sqlite-addon.cjs'), 'utf8').includes('filenameGiven'), 'the addon driver has a bundle of its own');
  } else {
    assert.ok(!existsSync(join(BIN, 'sqlite-addon.cjs')), 'no addon driver bundle without better-sqlite3');
  }
  assert.ok(readFileSync(join(BIN, 'commands', '_dispatch.cjs'), 'utf8').includes('A first look: mail sent'), 'the dispatcher lists every command');
  const refresh = readFileSync(join(BIN, 'brain-refresh.cjs'), 'utf8');
  assert.ok(refresh.includes('YAMLParseError') && refresh.includes('node:http'), 'the refresh bundle has what the hooks leave out');
});

test('the PostgreSQL engine and its driver are in a bundle of their own, which no SQLite command loads', () => {
  const engine = readFileSync(join(BIN, 'store-postgres.cjs'), 'utf8');
  assert.ok(engine.includes('SCRAM-SHA-256') && engine.includes('LISTEN'), 'the engine bundle carries the driver and the feed');
  for (const file of readdirSync(join(BIN, 'commands')).filter((name) => name.endsWith('.cjs'))) {
    const source = readFileSync(join(BIN, 'commands', file), 'utf8');
    assert.ok(!source.includes('SCRAM-SHA-256') && !source.includes('pg_advisory_xact_lock'), `${file} must not bundle the PostgreSQL engine`);
  }
  // At run time too: a hook on SQLite loads nothing of it; the same hook on a postgres:// URL does.
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const run = (env: NodeJS.ProcessEnv): string[] => {
      writeFileSync(trace, '');
      const result = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], {
        env: { ...bus.env, ...env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_TRACE_LOADS: trace },
        input: '{}',
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
      return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    };
    const onSqlite = run({});
    assert.ok(onSqlite.some((file) => file.endsWith('better_sqlite3.node') || file === 'builtin:node:sqlite'), `the trace works: ${onSqlite.join(', ')}`);
    assert.ok(!onSqlite.some((file) => file.includes('store-postgres') || /node_modules\/pg/.test(file)), onSqlite.join('\n'));
    const onPostgres = run({ AGENT_BUS_DB: 'postgres://nobody@127.0.0.1:1/none', AGENT_BUS_HOME: bus.folder, AGENT_BUS_PG_CONNECT_TIMEOUT: '0.2' });
    assert.ok(onPostgres.some((file) => file.endsWith('store-postgres.cjs')), 'a postgres:// URL loads the engine');
  } finally {
    bus.cleanup();
  }
});

/** A Node.js with SQLite built in: this one, or the other one CI names (AGENT_BUS_TEST_OTHER_NODE); null when neither has it. */
function nodeWithBuiltinSqlite(): string | null {
  const candidates = [process.execPath, process.env.AGENT_BUS_TEST_OTHER_NODE ?? ''].filter((node) => node !== '' && existsSync(node));
  return candidates.find((node) => spawnSync(node, ['-p', "process.getBuiltinModule('node:sqlite') ? 'yes' : 'no'"], { encoding: 'utf8' }).stdout.trim() === 'yes') ?? null;
}

const builtinNode = nodeWithBuiltinSqlite();
const addonBuilt = existsSync(join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'));

test('on a Node.js with SQLite built in, the hooks load no addon at all, only node:sqlite', { skip: builtinNode === null ? 'needs Node.js 22.13 or later (this one, or AGENT_BUS_TEST_OTHER_NODE)' : false }, () => {
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const env = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir, AGENT_BUS_TRACE_LOADS: trace };
    const payload = JSON.stringify({ session_id: 's-1', cwd: bus.dir, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: join(bus.dir, 'a.ts') } });
    register(env);
    assert.equal(runCli(['send', 'mail to take', '--to', 'shop/claude', '--name', 'human'], { env: bus.env }).code, 0);
    for (const hook of ['hook-session-start', 'hook-user-prompt', 'hook-pre-tool', 'hook-stop']) {
      writeFileSync(trace, '');
      const result = spawnSync(builtinNode as string, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), hook, '--client', 'claude'], { env, input: payload, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      assert.equal(result.stderr, '', `${hook} writes no warning`);
      const loads = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
      assert.ok(loads.includes('builtin:node:sqlite'), `${hook} opened the store through node:sqlite: ${loads.join(', ')}`);
      assert.ok(!loads.some((file) => file.endsWith('.node')), `${hook} loaded an addon: ${loads.join(', ')}`);
      assert.ok(!loads.some((file) => file.endsWith('sqlite-addon.cjs')), `${hook} read the addon driver's bundle`);
    }
    // The mail was taken by the prompt hook, through the built-in driver.
    assert.deepEqual(bus.rows<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE read_at IS NULL AND delivered_at IS NULL"), [{ n: 0 }]);
  } finally {
    bus.cleanup();
  }
});

test('on the addon driver, a hook loads its bundle and the addon, and never node:sqlite', { skip: addonBuilt && spawnSync(process.execPath, ['-e', `process.dlopen({ exports: {} }, ${JSON.stringify(join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))})`]).status === 0 ? false : 'the addon is not built for this Node.js' }, () => {
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const env = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_TRACE_LOADS: trace, AGENT_BUS_SQLITE_DRIVER: 'better-sqlite3' };
    const result = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], { env, input: '{}', encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const loads = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    assert.ok(loads.some((file) => file.endsWith('better_sqlite3.node')), loads.join(', '));
    assert.ok(loads.some((file) => file.endsWith('sqlite-addon.cjs')), loads.join(', '));
    assert.ok(!loads.includes('builtin:node:sqlite'), loads.join(', '));
  } finally {
    bus.cleanup();
  }
});

test('a hook that finds an empty inbox never loads node:crypto, whose start-up costs as much as its queries', () => {
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const env = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir, AGENT_BUS_TRACE_LOADS: trace };
    const run = (hook: string, input: string): string[] => {
      writeFileSync(trace, '');
      const result = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), hook, '--client', 'claude'], { env, input, encoding: 'utf8' });
      assert.equal(result.status, 0, result.stderr);
      return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    };
    const payload = JSON.stringify({ session_id: 's-1', cwd: bus.dir });
    // An agent on the bus, as its MCP server would have registered it, and a first turn behind it.
    register(env);
    run('hook-session-start', payload);
    for (const hook of ['hook-user-prompt', 'hook-stop', 'hook-pre-tool']) {
      const loads = run(hook, payload);
      assert.ok(loads.some((file) => file.endsWith('better_sqlite3.node') || file === 'builtin:node:sqlite'), `the trace saw ${hook} open the store`);
      assert.ok(!loads.includes('node:crypto'), `${hook} loaded node:crypto: ${loads.join(', ')}`);
      assert.ok(!loads.includes('node:http'), `${hook} on this machine's bus loaded node:http`);
    }
    // A hook on a machine set to use a hub opens one socket (node:net, not the heavier node:http) and no store at all (the hub here is down).
    writeFileSync(trace, '');
    const remoteRun = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], {
      env: { PATH: process.env.PATH, HOME: bus.dir, AGENT_BUS_URL: 'http://127.0.0.1:1', AGENT_BUS_TOKEN: 'abt_x', AGENT_BUS_TRACE_LOADS: trace },
      input: payload,
      encoding: 'utf8',
    });
    assert.equal(remoteRun.status, 0, remoteRun.stderr);
    const remoteLoads = readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    assert.ok(remoteLoads.includes('node:net'), `a remote hook asks the hub: ${remoteLoads.join(', ')}`);
    assert.ok(remoteLoads.some((file) => file.endsWith('hook-user-prompt.remote.cjs')) && !remoteLoads.some((file) => file.endsWith('hook-user-prompt.cjs')), `the remote bundle, not the bus's: ${remoteLoads.join(', ')}`);
    const remoteBundle = readFileSync(join(BIN, 'commands', 'hook-user-prompt.remote.cjs'), 'utf8');
    assert.ok(!remoteBundle.includes('filenameGiven') && !remoteBundle.includes('connectSqlite') && !remoteBundle.includes('deliverInbox'), 'the remote hook bundle holds none of the bus');
    assert.ok(!remoteLoads.some((file) => file.endsWith('.node') || file === 'builtin:node:sqlite' || file.includes('store-postgres') || file === 'node:crypto' || file === 'node:http'), remoteLoads.join(', '));
    // And the trace does see it when a hook has mail to take (the lease, the audit's hash).
    const sent = runCli(['send', 'a task', '--to', 'shop/claude', '--name', 'human'], { env: bus.env });
    assert.equal(sent.code, 0, sent.stderr);
    assert.ok(run('hook-user-prompt', payload).includes('node:crypto'), 'the trace records node:crypto when it is loaded');
  } finally {
    bus.cleanup();
  }
});

test('a listing of plain ASCII never builds the width tables for wide text; one with wide names does, and still lines up', () => {
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const run = (args: string[]): { stdout: string; loads: string[] } => {
      writeFileSync(trace, '');
      const result = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), ...args], {
        env: { ...bus.env, AGENT_BUS_TRACE_LOADS: trace },
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
      return { stdout: result.stdout, loads: readFileSync(trace, 'utf8').split('\n').filter(Boolean) };
    };
    for (const args of [['send', 'plain', '--to', 'alpha', '--name', 'alpha'], ['agents'], ['tail']]) {
      const { stdout, loads } = run(args);
      assert.ok(stdout.includes('alpha'), `${args[0]} printed its listing: ${stdout}`);
      assert.ok(loads.some((file) => file.endsWith(`${args[0]}.cjs`)), `the trace saw the ${args[0]} bundle`);
      assert.ok(!loads.includes('Intl.Segmenter'), `${args[0]} built a segmenter for ASCII text`);
    }
    const wide = run(['send', 'wide', '--to', '東京', '--name', '東京']);
    assert.ok(wide.loads.includes('Intl.Segmenter'), 'the trace records a segmenter when one is built');
    assert.match(wide.stdout, /^sent [0-9a-f]{12} {2}東京 {14} → 東京 {14} {2}wide {2}\(thread [0-9a-f]{12}\)\n$/);
  } finally {
    bus.cleanup();
  }
});

test("a shell command's parser is a bundle of its own, loaded by the pre-tool hook only for a shell command that may write a file", () => {
  const hook = readFileSync(join(BIN, 'commands', 'hook-pre-tool.cjs'), 'utf8');
  // The reader's own words (its table of git's options) and tree-sitter's stay out of the hook's bundle.
  for (const heavy of ['--pathspec-from-file', 'tree-sitter-bash.wasm', 'tree-sitter-wasm']) assert.ok(!hook.includes(heavy), `hook-pre-tool must not bundle ${heavy}`);
  assert.ok(readFileSync(join(BIN, 'shell-writes.cjs'), 'utf8').includes('--pathspec-from-file'), 'the shell bundle has the reader');
  const bus = tempBus();
  const trace = join(bus.dir, 'loads.txt');
  try {
    const run = (toolName: string, toolInput: Record<string, unknown>): string[] => {
      writeFileSync(trace, '');
      const result = spawnSync(process.execPath, ['--import', join(ROOT, 'test', 'helpers', 'trace-loads.mjs'), join(BIN, 'cli.cjs'), 'hook-pre-tool', '--client', 'claude'], {
        env: { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir, AGENT_BUS_TRACE_LOADS: trace },
        input: JSON.stringify({ session_id: 's-1', cwd: bus.dir, hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: toolInput }),
        encoding: 'utf8',
      });
      assert.equal(result.status, 0, result.stderr);
      return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
    };
    const loadsParser = (files: string[]): boolean => files.some((file) => file.endsWith('shell-writes.cjs'));
    const writing = run('Bash', { command: 'echo x > out.txt' });
    assert.ok(loadsParser(writing) && writing.some((file) => file.includes('tree-sitter-wasm')), `a writing command loads the parser: ${writing.join(', ')}`);
    assert.ok(!loadsParser(run('Bash', { command: 'ls -la && cat README.md' })), 'a command that names no writer is answered without it');
    assert.ok(!loadsParser(run('Edit', { file_path: join(bus.dir, 'a.ts'), old_string: 'a', new_string: 'b' })), 'an edit never loads it');
  } finally {
    bus.cleanup();
  }
});
