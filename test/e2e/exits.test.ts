/**
 * Honest exits: a usage error (an unknown command or flag, a missing or stray argument, a bad value)
 * exits 2 with one line and the usage, naming the nearest real command or flag; a failure at run
 * time exits 1 with one line; a request that did nothing is never a silent 0; and a reader that
 * closes the pipe early ends the command quietly with 0.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, runCli, withTempBus } from '../helpers/bus-env.js';

type Mistake = [args: string[], code: 1 | 2, said: RegExp];

test('a table of mistakes: each exits 2 with one line and the usage, or 1 with one line, and suggests the nearest', withTempBus((bus) => {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const outside = join(bus.dir, 'not-a-repo');
  mkdirSync(outside);
  const mistakes: Mistake[] = [
    [['sned', 'hi'], 2, /^agent-bus: unknown command 'sned'\. Did you mean 'send'\?$/],
    [['inbx'], 2, /Did you mean 'inbox'\?$/],
    [['send', 'hi', '--too', 'x'], 2, /unknown option '--too' \(did you mean '--to'\?\)/],
    [['agents', '--jsno'], 2, /unknown option '--jsno' \(did you mean '--json'\?\)/],
    [['help', 'nothere'], 2, /^agent-bus: help: no command or topic 'nothere'\./],
    [['help', 'sendd'], 2, /Did you mean 'send'\?$/],
    [['send'], 2, /missing BODY/],
    [['agents', 'extra'], 2, /unexpected argument 'extra'/],
    [['inbox', '--limit', 'abc'], 2, /--limit must be a whole number/],
    [['prune', '--older-than', '3 days'], 2, /^agent-bus: bad duration '3 days' \(.*\): use seconds \(90\), or numbers with s, m, h, d or w, largest first \(30s, 5m, 12h, 90d, 1h30m\)$/],
    [['wait', 'shop/claude', '--until', 'idle', '--timeout', '1h1h'], 2, /bad --timeout '1h1h' \(each unit once, largest first\)/],
    [['reserve', 'a.ts', '--ttl', 'soon', '--repo', repo], 2, /bad duration 'soon'/],
    [['task', 'list', '--state', 'stuck'], 2, /state must be one of/],
    [['forget', 'nobody'], 1, /^agent-bus: no agent named 'nobody' on the roster: nothing was forgotten/],
    [['forget', '--group', 'nowhere'], 1, /nothing was forgotten/],
    [['release', 'a.ts', '--repo', repo], 1, /^agent-bus: release: no reservation of 'a\.ts' to release/],
    [['status', 'ffffffff0000'], 1, /^agent-bus: no message with id 'ffffffff0000'$/],
    [['read', 'ffffffff0000'], 1, /^agent-bus: no message with id 'ffffffff0000'$/],
    [['thread', 'ffffffff0000'], 1, /^agent-bus: no thread 'ffffffff0000'/],
    [['task', 'show', 'ffff0000'], 1, /^agent-bus: there is no task 'ffff0000'$/],
    [['send', 'hi', '--to', 'nobody'], 1, /no agent or group named 'nobody'/],
  ];
  for (const [args, code, said] of mistakes) {
    const result = runCli(args, { env: bus.env, cwd: repo });
    const what = args.join(' ');
    assert.equal(result.code, code, `${what}: ${result.stderr}`);
    assert.equal(result.stdout, '', `${what}: nothing on stdout`);
    const lines = result.stderr.trimEnd().split('\n');
    assert.match(lines[0] as string, said, what);
    if (code === 2) {
      assert.equal(lines.length, 2, `${what}: one line and the usage: ${result.stderr}`);
      assert.match(lines[1] as string, /^Usage: agent-bus /, what);
    } else assert.equal(lines.length, 1, `${what}: one line: ${result.stderr}`);
  }
  // Outside any repo, reserve has nothing to hold paths of: refused, and nothing is reserved.
  const stray = runCli(['reserve', 'a.ts'], { env: bus.env, cwd: outside });
  assert.equal(stray.code, 1, stray.stderr);
  assert.equal(stray.stderr, `agent-bus: reserve: '${outside}' is in no git repo: run it inside the repo, or give --repo PATH\n`);
  assert.deepEqual(json<{ reservations: unknown[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations, []);
}));

test('a duration combines units; the same parser serves every option that takes one', withTempBus((bus) => {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const held = json<{ reserved: Array<{ since: string; until: string }> }>(runCli(['reserve', 'a.ts', '--ttl', '1h30m', '--json'], { env: bus.env, cwd: repo }));
  const [row] = held.reserved;
  assert.ok(row);
  const seconds = (Date.parse(row.until.slice(0, 23) + 'Z') - Date.parse(row.since.slice(0, 23) + 'Z')) / 1000;
  assert.equal(Math.round(seconds), 5400, '1h30m is an hour and a half');
  for (const args of [['prune', '--older-than', '2w3d', '--dry-run'], ['token', 'create', 'shop/claude', '--expires', '1d12h'], ['channel', 'publish', 'ops', 'a notice', '-t', '1h30m'], ['search', 'anything', '--since', '1d2h']]) {
    const result = runCli(args, { env: bus.env, cwd: repo });
    assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  }
}));

test('a reader that closes the pipe early ends the command quietly with exit 0', withTempBus(async (bus) => {
  assert.equal(runCli(['send', 'first', '--to', 'human'], { env: bus.env }).code, 0);
  // `agent-bus tail -f | head -1`: the first row is read, the reader goes, and the next row finds the pipe closed.
  const child = spawn(process.execPath, [CLI, 'tail', '-f', '--limit', '1'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  let code: number | null = null;
  void exited.then((value) => (code = value));
  for (let attempt = 0; attempt < 50 && code === null; attempt++) {
    runCli(['send', `more ${attempt}`, '--to', 'human'], { env: bus.env });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(await exited, 0, `exit 0 when the reader goes: ${stderr}`);
  assert.equal(stderr, '', 'nothing said');
}));
