/** The shipped CLI bundle: each command carries a V8 code cache, and a bad or missing cache only costs speed. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.js';
import { ROOT, tempBus } from '../helpers/bus-env.js';

const BIN = join(ROOT, 'dist', 'bin');

test('every command has its own bundle and code cache', () => {
  const files = new Set(readdirSync(join(BIN, 'commands')));
  for (const command of [...COMMANDS, { name: '_dispatch' }]) {
    assert.ok(files.has(`${command.name}.cjs`), `${command.name}.cjs`);
    assert.ok(files.has(`${command.name}.cjs.v8cache`), `${command.name}.cjs.v8cache`);
  }
});

test('a corrupt or missing code cache falls back to compiling the bundle', () => {
  // The copy stays inside the project so the bundle still finds node_modules.
  const copy = mkdtempSync(join(ROOT, 'dist', 'test-copy-'));
  const bus = tempBus();
  try {
    cpSync(BIN, copy, { recursive: true });
    writeFileSync(join(copy, 'commands', 'send.cjs.v8cache'), Buffer.from('not a code cache at all'));
    rmSync(join(copy, 'commands', 'inbox.cjs.v8cache'));
    assert.ok(!existsSync(join(copy, 'commands', 'inbox.cjs.v8cache')));
    const sent = spawnSync(process.execPath, [join(copy, 'cli.cjs'), 'send', 'cached?', '--to', 'alpha', '--name', 'alpha'], { env: bus.env, encoding: 'utf8' });
    assert.equal(sent.status, 0, sent.stderr);
    const read = spawnSync(process.execPath, [join(copy, 'cli.cjs'), 'inbox', '--name', 'alpha', '--json'], { env: bus.env, encoding: 'utf8' });
    assert.equal(read.status, 0, read.stderr);
    assert.equal((JSON.parse(read.stdout) as Array<{ body: string }>)[0]?.body, 'cached?');
  } finally {
    rmSync(copy, { recursive: true, force: true });
    bus.cleanup();
  }
});

test("the hooks' bundles carry the store, the core and the dialects, nothing heavier", () => {
  for (const hook of ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool']) {
    const source = readFileSync(join(BIN, 'commands', `${hook}.cjs`), 'utf8');
    // The brain's YAML parser and HTTP client live in a bundle of their own, loaded only when a refresh is due.
    for (const heavy of ['@modelcontextprotocol', 'zod', 'jsonc-parser', 'smol-toml', 'picocolors', 'node:http', 'require("http")', 'yaml/dist', 'YAMLParseError']) {
      assert.ok(!source.includes(heavy), `${hook} must not bundle ${heavy}`);
    }
    assert.ok(source.includes('better-sqlite3'), `${hook} bundles the store`);
  }
  const refresh = readFileSync(join(BIN, 'brain-refresh.cjs'), 'utf8');
  assert.ok(refresh.includes('YAMLParseError') && refresh.includes('node:http'), 'the refresh bundle has what the hooks leave out');
});
