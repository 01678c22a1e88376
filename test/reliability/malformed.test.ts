/**
 * Reliability: malformed input of every kind, thrown at the real processes. Hook payloads for
 * each client's hooks, CLI argument vectors, MCP tool arguments over stdio and the hub, and
 * garbage in the files the bus reads. Required everywhere: no crash, no stack trace, no hang,
 * no corrupted file, and a short error.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, runCli, tempBus, ON_POSTGRES, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connectHttp, createToken, startHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { figure, randomFrom, seedFor } from './report.js';

const STACK_TRACE = /\n\s+at .+[(:]\d+/;
const HOOKS = ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool'];
const CLIENTS = ['claude', 'codex', 'opencode', 'agy', 'gemini', 'copilot', 'qwen'];

function deep(levels: number): string {
  return `${'{"a":['.repeat(levels)}1${']}'.repeat(levels)}`;
}

/** The payloads: each kind a hook could be handed by a broken client or a hostile one. */
function payloads(random: () => number): Array<[string, Buffer]> {
  const bytes = Buffer.alloc(4096);
  for (let index = 0; index < bytes.length; index++) bytes[index] = Math.floor(random() * 256);
  const valid = JSON.stringify({ session_id: 'sess-1', cwd: '/tmp', prompt: 'hello', hook_event_name: 'UserPromptSubmit', transcript_path: '/nowhere' });
  return [
    ['random bytes', bytes],
    ['truncated JSON', Buffer.from(valid.slice(0, Math.floor(valid.length * random())))],
    ['wrong types', Buffer.from(JSON.stringify({ session_id: 42, cwd: ['x'], prompt: { a: 1 }, hook_event_name: null, stop_hook_active: 'yes' }))],
    ['a 2 MB string', Buffer.from(JSON.stringify({ session_id: 's'.repeat(2 * 1024 * 1024), cwd: '/tmp', prompt: 'p'.repeat(2 * 1024 * 1024) }))],
    ['deep nesting', Buffer.from(deep(20_000))],
    ['invalid UTF-8', Buffer.concat([Buffer.from('{"session_id":"'), Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xff, 0xfe]), Buffer.from('","cwd":"/tmp"}')])],
    ['a JSON array', Buffer.from('[1,2,3]')],
    ['nothing', Buffer.alloc(0)],
  ];
}

/** Whether a process's outcome keeps the rules: an exit code that means something, one short line at most on stderr, no trace. */
function problemWith(result: { status: number | null; signal: NodeJS.Signals | null; stderr: string }, allowed: number[]): string | null {
  if (result.signal !== null) return `killed by ${result.signal} (a hang, or a crash)`;
  if (result.status === null || !allowed.includes(result.status)) return `exit ${String(result.status)}`;
  if (STACK_TRACE.test(result.stderr)) return `a stack trace: ${result.stderr.slice(0, 300)}`;
  const lines = result.stderr.trim() === '' ? 0 : messageLines(result.stderr).length;
  if (lines > 2) return `${lines} lines on stderr: ${result.stderr.slice(0, 300)}`;
  if (result.stderr.length > 1200) return `${result.stderr.length} characters on stderr`;
  return null;
}

function integrityOf(bus: TempBus): string {
  return ON_POSTGRES ? 'ok' : String(bus.rows<{ integrity_check: string }>('PRAGMA integrity_check')[0]?.integrity_check);
}

test('hook payloads for every client: random bytes, truncated JSON, wrong types, 2 MB strings, deep nesting, invalid UTF-8', { timeout: 300_000 }, () => {
  const seed = seedFor('hook-payloads');
  const random = randomFrom(seed);
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'waiting', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    const failures: string[] = [];
    let runs = 0;
    for (const client of CLIENTS) {
      for (const hook of HOOKS) {
        for (const [kind, payload] of payloads(random)) {
          const result = spawnSync(process.execPath, [CLI, hook, '--client', client], { env: bus.env, cwd: bus.env.HOME, input: payload, encoding: 'utf8', timeout: 15_000, maxBuffer: 16 * 1024 * 1024 });
          runs += 1;
          const problem = problemWith(result, [0]);
          if (problem !== null) failures.push(`${hook} --client ${client} with ${kind}: ${problem}`);
        }
      }
    }
    const integrity = integrityOf(bus);
    figure('hook-payloads', { seed, runs, failures: failures.length, integrity });
    assert.deepEqual(failures, []);
    assert.equal(integrity, 'ok');
  } finally {
    bus.cleanup();
  }
});

/** Words a vector is made of: real flags and values, and the junk a fat finger or a script gone wrong gives. */
const JUNK = ['--json', '--limit', '-1', '0', '99999999999999999999', '--to', '--name', '', ' ', '*', '--', '-', '--no-such-flag', '-z', 'x'.repeat(100_000), 'ü\u001b[31m\u202e\r\n', '../../etc/passwd', '--thread', '--severity', 'critical', '--ttl', '-5m', 'a/b/c/d', '{"a":1}', '--older-than', '1000000w', '--dry-run', 'verify', 'list', 'publish', 'copy', 'set', 'show', 'status'];
/** Commands that wait on a terminal, a network or a long-running loop: exercised elsewhere. */
const SKIPPED = new Set(['chat', 'serve', 'hook-watch', 'demo', 'login']);

test('CLI argument vectors: every command with junk arguments answers with an exit code that means something and at most a line', { timeout: 300_000 }, () => {
  const seed = seedFor('cli-vectors');
  const random = randomFrom(seed);
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'waiting', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    const commands = COMMANDS.map((command) => command.name).filter((name) => !SKIPPED.has(name));
    const failures: string[] = [];
    let runs = 0;
    for (let round = 0; round < 4; round++) {
      for (const command of [...commands, 'no-such-command']) {
        const words = Array.from({ length: 1 + Math.floor(random() * 5) }, () => JUNK[Math.floor(random() * JUNK.length)] as string);
        const result = spawnSync(process.execPath, [CLI, command, ...words], { env: bus.env, cwd: bus.env.HOME, input: '', encoding: 'utf8', timeout: 20_000 });
        runs += 1;
        const problem = problemWith(result, [0, 1, 2]);
        if (problem !== null) failures.push(`${command} ${words.map((word) => JSON.stringify(word.slice(0, 40))).join(' ')}: ${problem}`);
      }
    }
    const integrity = integrityOf(bus);
    figure('cli-vectors', { seed, runs, failures: failures.length, integrity });
    assert.deepEqual(failures, []);
    assert.equal(integrity, 'ok');
  } finally {
    bus.cleanup();
  }
});

/** Arguments of the wrong shape for any tool. */
function toolArguments(random: () => number, properties: string[]): Array<Record<string, unknown>> {
  const values: unknown[] = [null, 42, -1, 1e308, true, [], [1, 'two'], { nested: { deeper: [null] } }, '', 'x'.repeat(200_000), '\u0000\u202e\u001b]0;', 'a/b/c', '*'];
  const pick = (): unknown => values[Math.floor(random() * values.length)];
  const cases: Array<Record<string, unknown>> = [{}, { unexpected: pick() }];
  for (let index = 0; index < 4; index++) cases.push(Object.fromEntries(properties.map((name) => [name, pick()])));
  return cases;
}

async function fuzzTools(call: (name: string, args: Record<string, unknown>) => Promise<unknown>, tools: Array<{ name: string; properties: string[] }>, random: () => number): Promise<{ calls: number; failures: string[] }> {
  const failures: string[] = [];
  let calls = 0;
  for (const tool of tools) {
    for (const args of toolArguments(random, tool.properties)) {
      calls += 1;
      try {
        await call(tool.name, args);
      } catch (error) {
        const message = (error as Error).message;
        // A refusal of the arguments (JSON-RPC invalid params) is an answer; a dropped connection is not.
        if (!/-32602|Invalid arguments|invalid_type|Input validation error|MCP error/i.test(message)) failures.push(`${tool.name}: ${message.slice(0, 200)}`);
      }
    }
  }
  return { calls, failures };
}

test('MCP tool arguments of the wrong shape, over stdio and over the hub: each an error, the server still serving', { timeout: 300_000 }, async () => {
  const seed = seedFor('tool-arguments');
  const random = randomFrom(seed);
  const bus = tempBus();
  try {
    const stdio = await connect({ ...bus.env, AGENT_BUS_NAME: 'fuzz/claude' });
    let stdioResult: { calls: number; failures: string[] };
    let tools: Array<{ name: string; properties: string[] }>;
    try {
      tools = (await stdio.client.listTools()).tools.map((tool) => ({ name: tool.name, properties: Object.keys((tool.inputSchema as { properties?: object }).properties ?? {}) }));
      stdioResult = await fuzzTools((name, args) => stdio.client.callTool({ name, arguments: args }), tools, random);
      // set_session may have taken a label among the fuzz: whoever it is now, it answers.
      assert.match((await stdio.call<{ name: string }>('whoami')).name, /^fuzz\/claude/, 'still serving');
      assert.doesNotMatch(stdio.stderr(), STACK_TRACE);
    } finally {
      await stdio.close();
    }
    const hub = await startHub(bus);
    let hubResult: { calls: number; failures: string[] };
    try {
      const { token } = createToken(bus, 'fuzz/codex');
      const remote = await connectHttp(hub.url, token);
      try {
        hubResult = await fuzzTools((name, args) => remote.client.callTool({ name, arguments: args }), tools, random);
        assert.match(((await remote.call('whoami')).value as { name: string }).name, /^fuzz\/codex/, 'the hub still serving');
      } finally {
        await remote.close();
      }
      assert.doesNotMatch(hub.output(), STACK_TRACE);
    } finally {
      await hub.stop();
    }
    const integrity = integrityOf(bus);
    figure('tool-arguments', { seed, tools: tools.length, stdio_calls: stdioResult.calls, hub_calls: hubResult.calls, failures: stdioResult.failures.length + hubResult.failures.length, integrity });
    assert.deepEqual([...stdioResult.failures, ...hubResult.failures], []);
    assert.equal(integrity, 'ok');
  } finally {
    bus.cleanup();
  }
});

test('garbage in wake.json, .env, feed JSON, front matter and client configs: commands go on, and no file is changed', { timeout: 300_000 }, () => {
  const seed = seedFor('garbage-files');
  const random = randomFrom(seed);
  const bus = tempBus();
  try {
    mkdirSync(bus.folder, { recursive: true, mode: 0o700 });
    const junk = (): string => {
      const bytes = Buffer.alloc(512);
      for (let index = 0; index < bytes.length; index++) bytes[index] = Math.floor(random() * 256);
      return bytes.toString('latin1');
    };
    const failures: string[] = [];
    let runs = 0;
    const check = (what: string, args: string[], allowed: number[], env: NodeJS.ProcessEnv = {}, cwd?: string): void => {
      const result = spawnSync(process.execPath, [CLI, ...args], { env: { ...bus.env, ...env }, cwd: cwd ?? bus.env.HOME, input: '', encoding: 'utf8', timeout: 20_000 });
      runs += 1;
      const problem = problemWith(result, allowed);
      if (problem !== null) failures.push(`${what}: ${args.join(' ')}: ${problem}`);
    };
    const samples = ['{ not json', '[]', 'null', '"a string"', '{"a": {"command": 42}}', junk(), deep(5_000)];
    for (const [index, sample] of samples.entries()) {
      writeFileSync(join(bus.folder, 'wake.json'), sample, { mode: 0o600 });
      check(`wake.json #${index}`, ['send', 'hello', '--to', 'me', '--name', 'me'], [0]);
      check(`wake.json #${index}`, ['wake-config', 'show'], [0, 1]);
      writeFileSync(join(bus.folder, '.env'), sample, { mode: 0o600 });
      check(`.env #${index}`, ['agents'], [0]);
      check(`.env #${index}`, ['brain', 'status'], [0, 1]);
    }
    const feed = join(bus.dir, 'feed');
    mkdirSync(feed);
    for (const [index, sample] of samples.entries()) {
      writeFileSync(join(feed, `entry-${index}.json`), sample);
      writeFileSync(join(feed, `note-${index}.md`), `---\n${sample}\n---\nbody ${index}\n`);
    }
    writeFileSync(join(feed, 'bad-yaml.md'), '---\ntitle: [unclosed\npriority: {{{\n---\nbody\n');
    check('feed files', ['brain', 'refresh'], [0, 1], { BRAIN_ENABLED: '1', BRAIN_SOURCE_PATH: feed });
    // Client configs that do not parse: init leaves each alone, byte for byte.
    const repo = join(bus.dir, 'repo');
    mkdirSync(join(repo, '.git'), { recursive: true });
    mkdirSync(join(repo, '.claude'));
    mkdirSync(join(repo, '.codex'));
    const configs: Record<string, string> = {
      '.mcp.json': '{"mcpServers": {',
      '.claude/settings.json': junk(),
      '.codex/config.toml': '[mcp_servers.agent-bus\ncommand = ',
      'opencode.json': deep(3_000),
    };
    for (const [path, text] of Object.entries(configs)) writeFileSync(join(repo, path), text);
    check('client configs', ['init', '--clients', 'claude,codex,opencode', repo], [0, 1, 2], {}, repo);
    check('client configs', ['doctor'], [0, 1]);
    for (const [path, text] of Object.entries(configs)) if (readFileSync(join(repo, path), 'utf8') !== text) failures.push(`${path} was changed`);
    const integrity = integrityOf(bus);
    figure('garbage-files', { seed, runs, samples: samples.length, failures: failures.length, integrity });
    assert.deepEqual(failures, []);
    assert.equal(integrity, 'ok');
  } finally {
    bus.cleanup();
  }
});
