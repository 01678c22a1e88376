/**
 * Privacy: every file the bus creates is its user's alone, even under a umask that would let
 * anyone read it; the bus warns when its folder or database is open to others; no token,
 * password or feed bearer token reaches the audit log or an error.
 */
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { appendHistory } from '../../src/tui/chat-history.js';
import { filesUnder, runCli, tempBus, ON_POSTGRES, messageLines } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';

function modeOf(path: string): number {
  return lstatSync(path).mode & 0o777;
}

test('every file and folder the bus creates is private, whatever the umask: database, logs (rotated too), wake.json, chat_history, the outbox, hub.json', async () => {
  const before = process.umask(0);
  const feedToken = 'feed-bearer-secret-1234567890';
  const refusing = createServer((_req, res) => {
    res.writeHead(503);
    res.end('down');
  });
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  const bus = tempBus({ AGENT_BUS_AUDIT_MAX_BYTES: '2K', BRAIN_URL: `http://127.0.0.1:${(refusing.address() as { port: number }).port}`, BRAIN_HTTP_TOKEN: feedToken, BRAIN_ENABLED: '1' });
  try {
    for (let index = 0; index < 12; index++) assert.equal(runCli(['send', `note ${index}`, '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    assert.equal(runCli(['wake-config', 'set', 'me', 'true'], { env: bus.env }).code, 0);
    assert.equal(appendHistory(join(bus.folder, 'chat_history'), '/help'), null);
    // A marker the brain cannot take now waits in the outbox.
    const markers = runCli(['brain', 'markers'], { env: bus.env, input: JSON.stringify({ session_id: 's', last_assistant_message: 'done. <!-- @lesson --> the build needs node 20 <!-- @/lesson -->' }) });
    const errors: string[] = [markers.stderr];
    const refresh = runCli(['brain', 'refresh'], { env: bus.env });
    errors.push(refresh.stderr);
    const hub = await startHub(bus);
    let secret = '';
    try {
      const { token } = createToken(bus, 'me');
      secret = token;
      const login = runCli(['login', hub.url, '--token', token], { env: bus.env });
      assert.equal(login.code, 0, login.stderr);
      errors.push(login.stderr, hub.output());
      const refused = runCli(['login', hub.url, '--token', `${token.slice(0, -4)}xxxx`], { env: { ...bus.env, AGENT_BUS_HOME: join(bus.dir, 'elsewhere') } });
      assert.notEqual(refused.code, 0);
      errors.push(refused.stderr);
    } finally {
      await hub.stop();
    }
    const created = [...filesUnder(bus.folder), bus.folder, ...readdirSync(bus.folder, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(bus.folder, entry.name))];
    const names = created.map((path) => path.slice(bus.folder.length + 1));
    for (const expected of ['audit.log', 'audit.log.1', 'audit.log.lock', 'wake.json', 'chat_history', 'hub.json', ...(ON_POSTGRES ? [] : ['bus.db'])]) assert.ok(names.includes(expected), `${expected} was made (${names.join(', ')})`);
    assert.ok(names.some((name) => name.startsWith('brain-outbox/')), `the outbox holds the marker (${names.join(', ')})`);
    for (const path of created) {
      const stats = lstatSync(path);
      assert.equal(stats.mode & 0o077, 0, `${path} is ${modeOf(path).toString(8)}: private to its user`);
    }
    // Secrets: never in the log, never in an error.
    const logged = filesUnder(bus.folder).filter((path) => /audit\.log(\.\d+)?$/.test(path)).map((path) => readFileSync(path, 'utf8')).join('');
    const secretPart = secret.slice('abt_'.length + 16 + 1);
    assert.equal(secretPart.length, 43, 'the secret part of abt_<id>_<secret>');
    for (const [what, text] of [['the audit log', logged], ['an error', errors.join('\n')]] as const) {
      assert.ok(!text.includes(secretPart), `the hub token is not in ${what}`);
      assert.ok(!text.includes(feedToken), `the feed's bearer token is not in ${what}`);
    }
  } finally {
    process.umask(before);
    bus.cleanup();
    await new Promise((resolve) => refusing.close(resolve));
  }
});

test('a bus folder or database others can write, or another user owns, is warned of in one line, and the command still runs', { skip: ON_POSTGRES ? 'the database is a server: the folder check is the same as on SQLite' : false }, () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    assert.equal(runCli(['agents'], { env: bus.env }).stderr, '', 'a private bus says nothing');
    chmodSync(bus.folder, 0o777);
    const open = runCli(['agents'], { env: bus.env });
    assert.equal(open.code, 0);
    assert.match(open.stderr, new RegExp(`^agent-bus: warning: ${bus.folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is writable by anyone \\(mode 777\\): another user could read or change the bus \\(chmod 700 `));
    assert.equal(messageLines(open.stderr).length, 1);
    chmodSync(bus.folder, 0o700);
    chmodSync(bus.db, 0o666);
    assert.match(runCli(['agents'], { env: bus.env }).stderr, /bus\.db is writable by anyone \(mode 666\).*chmod 600 /);
    const doctor = runCli(['doctor', '--json'], { env: bus.env });
    assert.equal(doctor.code, 1);
    assert.ok((JSON.parse(doctor.stdout) as { checks: Array<{ check: string; fix?: string }> }).checks.some((check) => check.check === 'permissions' && check.fix === `chmod 600 ${bus.db}`));
    chmodSync(bus.db, 0o600);
    // Owned by someone else (where this user may give a file away: root).
    if (process.getuid?.() === 0) {
      chownSync(bus.db, 65534, 65534);
      assert.match(runCli(['agents'], { env: bus.env }).stderr, /bus\.db is owned by another user \(uid 65534\).*chown 0 /);
      chownSync(bus.db, 0, 0);
    }
  } finally {
    bus.cleanup();
  }
});
