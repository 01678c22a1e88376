/** The Pi extension's parts that need no Pi: its inbox socket, which takes the frames a session's server posts, and the files a Pi tool call writes. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openInboxSocket } from '../../src/clients/pi/inbox-socket.js';
import { RunTracker } from '../../src/clients/pi/extension.js';
import { postToSession } from '../../src/wake/session-socket.js';
import { piWrites } from '../../src/clients/writes.js';

test("the inbox socket hands on a post with the session's token, and drops one without it", async () => {
  const got: string[] = [];
  const socket = await openInboxSocket((text) => got.push(text));
  try {
    // A wrong token: the connection is closed, the message unread (the poster cannot tell: the socket never answers).
    await postToSession({ path: socket.path, token: 'not-the-token' }, 'from a stranger');
    const posted = await postToSession({ path: socket.path, token: socket.token }, 'agent-bus: new mail from "human"');
    assert.deepEqual(posted, { ok: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(got, ['agent-bus: new mail from "human"']);
    // Without any auth line: nothing.
    await new Promise<void>((resolve) => {
      const raw = connect(socket.path, () => raw.end(`${JSON.stringify({ type: 'user', message: { role: 'user', content: 'sneaky' } })}\n`));
      raw.on('close', () => resolve());
      raw.on('error', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(got, ['agent-bus: new mail from "human"']);
  } finally {
    await socket.close();
  }
  assert.ok(!existsSync(socket.path), 'closed, the socket and its folder are gone');
});

test("the files Pi's write, edit and bash calls write", async () => {
  assert.deepEqual(await piWrites({ tool_name: 'write', tool_input: { path: 'src/a.ts', content: 'x' } }), ['src/a.ts']);
  assert.deepEqual(await piWrites({ tool_name: 'edit', tool_input: { path: '@/repo/src/b.ts', edits: [] } }), ['/repo/src/b.ts']);
  assert.deepEqual(await piWrites({ tool_name: 'read', tool_input: { path: 'src/a.ts' } }), []);
  const shell = await piWrites({ tool_name: 'bash', tool_input: { command: 'echo 1 > out.txt' }, cwd: '/repo' });
  assert.deepEqual(shell.map((file) => join('/repo', file.replace(/^\/repo\/?/, ''))), ['/repo/out.txt']);
});

test('runs settle once none is under way or started by the stop hook, and Pi is idle', async () => {
  const runs = new RunTracker();
  const settledAfter = async (idle: () => boolean): Promise<boolean> => {
    let settled = false;
    const waiting = runs.settled(idle, 1_000, 5).then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    return settled || (await Promise.race([waiting, Promise.resolve(false)]));
  };
  assert.equal(await settledAfter(() => true), true, 'nothing ran');
  runs.started();
  assert.equal(await settledAfter(() => true), false, 'a run is under way');
  runs.triggered();
  runs.ended();
  assert.equal(await settledAfter(() => true), false, 'the stop hook started another, which has not begun');
  runs.started();
  runs.ended();
  assert.equal(await settledAfter(() => false), false, 'Pi is not idle yet');
  assert.equal(await settledAfter(() => true), true, 'all done');
});

test('the inbox socket\'s folder goes with a process that exits without closing it, as Pi in print mode may', () => {
  const module = fileURLToPath(new URL('../../src/clients/pi/inbox-socket.ts', import.meta.url));
  const script = `const { openInboxSocket } = await import(${JSON.stringify(module)}); const socket = await openInboxSocket(() => {}); console.log(socket.path); process.exit(0);`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const path = child.stdout.trim();
  assert.match(path, /agent-bus-pi-[^/]+\/inbox\.sock$/);
  assert.ok(!existsSync(join(path, '..')), `the folder ${join(path, '..')} is gone`);
});
