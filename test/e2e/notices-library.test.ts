/**
 * The typed library function `publishNotice`, imported as `agent-bus` by a
 * separate Node process against the built package (package.json "exports" →
 * dist/index.js): it validates like the CLI and stores what the CLI then lists.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { json, readAudit, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import type { PublishResult } from '../../src/core/notice-ops.js';

type Published = PublishResult;

type Outcome = { ok: true; result: Published } | { ok: false; name: string; message: string; invalidInput: boolean };

/** A consumer project: node_modules/agent-bus is this repository, as `npm link` would make it. */
let consumer = '';

const SCRIPT = `
import { publishNotice, InvalidInputError } from 'agent-bus';

// argv: the request as JSON, and optionally the env to pass (otherwise process.env is used).
const request = JSON.parse(process.argv[2]);
const env = process.argv[3] === undefined ? undefined : JSON.parse(process.argv[3]);
try {
  const result = env === undefined ? await publishNotice(request) : await publishNotice(request, env);
  process.stdout.write(JSON.stringify({ ok: true, result }));
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, name: error.name, message: error.message, invalidInput: error instanceof InvalidInputError }));
}
`;

before(() => {
  consumer = mkdtempSync(join(tmpdir(), 'agent-bus-consumer-'));
  mkdirSync(join(consumer, 'node_modules'));
  symlinkSync(ROOT, join(consumer, 'node_modules', 'agent-bus'), 'dir');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(join(consumer, 'publish.mjs'), SCRIPT);
});

after(() => {
  if (consumer !== '') rmSync(consumer, { recursive: true, force: true });
});

function publishFrom(env: NodeJS.ProcessEnv, request: Record<string, unknown>, passEnv?: NodeJS.ProcessEnv): Outcome {
  const args = [join(consumer, 'publish.mjs'), JSON.stringify(request), ...(passEnv === undefined ? [] : [JSON.stringify(passEnv)])];
  const result = spawnSync(process.execPath, args, { cwd: consumer, env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '');
  return JSON.parse(result.stdout) as Outcome;
}

function published(outcome: Outcome): Published {
  if (!outcome.ok) assert.fail(`publishNotice threw ${outcome.name}: ${outcome.message}`);
  return outcome.result;
}

function storedIds(bus: TempBus): string[] {
  return json<Array<{ notice_id: string }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env })).map((row) => row.notice_id);
}

function withBus(work: (bus: TempBus) => void): () => void {
  return () => {
    const bus = tempBus();
    try {
      work(bus);
    } finally {
      bus.cleanup();
    }
  };
}

/** Seconds between a notice's creation and expiry (stamps are `…SS.ffffffZ`, equal fractions here). */
function ttlOf(notice: Published): number {
  assert.equal(notice.created_at.slice(19), notice.expires_at.slice(19));
  return (Date.parse(`${notice.expires_at.slice(0, 19)}Z`) - Date.parse(`${notice.created_at.slice(0, 19)}Z`)) / 1000;
}

test('publishNotice from another process: stored, listed by the CLI, audited', withBus((bus) => {
  const notice = published(publishFrom(bus.env, { channel: 'brain', message: 'Hot arcs updated: 3 active', severity: 'info', ttl: '1h', source: 'brain-adapter', title: 'Hot arcs', priority: 10 }));
  assert.match(notice.notice_id, /^[0-9a-f]{12}$/);
  assert.deepEqual(
    [notice.channel, notice.severity, notice.message, notice.source, notice.title, notice.priority, notice.evicted],
    ['brain', 'info', 'Hot arcs updated: 3 active', 'brain-adapter', 'Hot arcs', 10, []],
  );
  assert.equal(ttlOf(notice), 3600);

  const listed = json<Array<Record<string, unknown>>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
  assert.equal(listed.length, 1);
  const { evicted: _evicted, ...view } = notice;
  assert.deepEqual(listed[0], { ...view, delivered_to: 0, acknowledged_by: 0 });
  const channels = json<Array<{ channel: string | null; total: number; info: number }>>(runCli(['channel', 'list', '--json'], { env: bus.env }));
  assert.deepEqual(channels.map((row) => [row.channel, row.total, row.info]), [['brain', 1, 1]]);

  const audited = readAudit(bus.audit).filter((row) => row.op === 'notice');
  assert.deepEqual(audited.map((row) => [row.notice_event, row.message_id, row.actor, row.to]), [['publish', notice.notice_id, 'brain-adapter', 'brain']]);
}));

test('publishNotice: defaults as the CLI gives them (global, info, its TTL, operator, priority 5)', withBus((bus) => {
  const notice = published(publishFrom(bus.env, { message: '  deploy freeze until 3am  ' }));
  assert.deepEqual(
    [notice.channel, notice.severity, notice.message, notice.source, notice.priority, notice.title],
    [null, 'info', 'deploy freeze until 3am', 'operator', 5, null],
  );
  assert.equal(ttlOf(notice), 14_400);
  const critical = published(publishFrom(bus.env, { channel: 'deploy', message: 'stop', severity: 'CRITICAL', ttl: 90 }));
  assert.deepEqual([critical.severity, ttlOf(critical)], ['critical', 90]);
  const cli = json<Published>(runCli(['notice', 'deploy freeze until 3am', '--json'], { env: bus.env }));
  assert.equal(cli.content_hash, notice.content_hash, 'the same notice hashes the same from the library and the CLI');
  assert.deepEqual(storedIds(bus).sort(), [notice.notice_id, critical.notice_id, cli.notice_id].sort());
}));

test('publishNotice: the env argument decides which bus, not process.env', withBus((bus) => {
  const elsewhere = tempBus();
  try {
    // The child's own environment points at another bus; the env passed in wins.
    const notice = published(publishFrom(elsewhere.env, { channel: 'ops', message: 'to the passed env' }, bus.env));
    assert.deepEqual(storedIds(bus), [notice.notice_id]);
    assert.deepEqual(storedIds(elsewhere), []);
  } finally {
    elsewhere.cleanup();
  }
}));

test('publishNotice: bad requests reject with the CLI\'s message, and nothing is stored', withBus((bus) => {
  const cases: Array<{ request: Record<string, unknown>; cli: string[]; message: string }> = [
    { request: { channel: 'ops', message: '' }, cli: ['channel', 'publish', 'ops', ''], message: 'message must be non-empty; nothing was published' },
    { request: { channel: 'ops', message: '   ' }, cli: ['channel', 'publish', 'ops', '   '], message: 'message must be non-empty; nothing was published' },
    { request: { channel: 'ops', message: 'x', severity: 'loud' }, cli: ['channel', 'publish', 'ops', 'x', '--severity', 'loud'], message: "unknown severity 'loud': use info, alert or critical" },
    {
      request: { channel: 'ops', message: 'x', ttl: '5x' },
      cli: ['channel', 'publish', 'ops', 'x', '--ttl', '5x'],
      message: "bad TTL '5x' ('x' is no unit): use seconds (90), or numbers with s, m, h, d or w, largest first (30s, 5m, 12h, 90d, 1h30m)",
    },
    { request: { channel: 'ops', message: 'x', ttl: '31d' }, cli: ['channel', 'publish', 'ops', 'x', '--ttl', '31d'], message: "bad TTL '31d': the longest is 30d" },
    {
      request: { channel: 'bad name', message: 'x' },
      cli: ['channel', 'publish', 'bad name', 'x'],
      message: "bad channel 'bad name': use up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
    },
  ];
  for (const { request, cli, message } of cases) {
    const outcome = publishFrom(bus.env, request);
    assert.deepEqual(outcome, { ok: false, name: 'InvalidInputError', message, invalidInput: true }, JSON.stringify(request));
    const run = runCli(cli, { env: bus.env });
    // A value the bus cannot use is bad usage on the command line: exit 2, the message, then the usage.
    assert.deepEqual([run.code, run.stderr, run.stdout], [2, `agent-bus: ${message}\nUsage: agent-bus channel [options] ACTION [ARGS...]    (agent-bus channel --help for more)\n`, ''], cli.join(' '));
  }
  assert.deepEqual(storedIds(bus), []);
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'notice'), []);
}));

test('publishNotice: a TypeScript consumer type-checks against the built declarations', () => {
  const project = join(consumer, 'typed');
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, 'consumer.ts'),
    [
      "import { publishNotice, type PublishResult, type Severity } from 'agent-bus';",
      "const result: Promise<PublishResult> = publishNotice({ channel: 'brain', message: 'hi', severity: 'info', ttl: 3600 }, { AGENT_BUS_DB: '/tmp/x.db' });",
      "const severity: Severity = 'alert';",
      'export { result, severity };',
      '// @ts-expect-error message is required',
      'void publishNotice({ channel: "brain" });',
      '// @ts-expect-error severity is text',
      'void publishNotice({ message: "hi", severity: 5 });',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['consumer.ts'] }),
  );
  // The project's package.json sits one folder up ("type": "module"), so consumer.ts is an ES module.
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')], { cwd: project, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
});
