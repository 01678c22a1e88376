/**
 * A session whose client runs on without its agent-bus server (killed, crashed): hooks its server
 * answers reach nothing, so the roster (`agents --json`, the CLI, the dashboard) and doctor name it,
 * its mail waits unread, and the mark goes once the client is gone too.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { CLI, json, runCli, withTempBus } from '../helpers/bus-env.js';
import { CHROMIUM, launchBrowser, startWeb } from '../helpers/browser.js';
import { repoIn } from '../helpers/reservations.js';
import { waitUntil } from '../helpers/wait.js';

let browser: Browser | null = null;
before(async () => {
  if (CHROMIUM !== null) browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

interface Row {
  name: string;
  live: boolean | null;
  state: string;
  server_gone: boolean | null;
}

/** A client stand-in (a Node process, as Claude Code is) that starts the session's server and keeps running; the server's pid on its first line. */
function clientWithServer(env: NodeJS.ProcessEnv, cwd: string): { client: ChildProcess; server: Promise<number> } {
  const script = `const c = require('node:child_process').spawn(process.execPath, [${JSON.stringify(CLI)}, 'serve', '--client', 'claude'], { stdio: ['pipe', 'pipe', 'ignore'] }); console.log(c.pid); setInterval(() => {}, 1000);`;
  const client = spawn(process.execPath, ['-e', script], { env: { ...env, CLAUDE_CODE_SESSION_ID: 'cut-1' }, cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  const server = new Promise<number>((resolve) => client.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))));
  return { client, server };
}

test('a session whose server is killed while its client runs on: marked server-gone in agents, its text and the dashboard; doctor names it; its mail waits; the mark goes with the client', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const { client, server } = clientWithServer(bus.env, root);
  try {
    const serverPid = await server;
    const rows = (): Row[] => json<Row[]>(runCli(['agents', '--json'], { env: bus.env }));
    await waitUntil(() => rows().some((row) => row.name === 'shop/claude-1' && row.live === true), 'the session running');
    assert.equal(rows().find((row) => row.name === 'shop/claude-1')?.server_gone, false);
    assert.equal(rows().find((row) => row.name === 'shop/claude')?.server_gone, null, 'a client address is no session');
    process.kill(serverPid, 'SIGKILL');
    await waitUntil(() => rows().find((row) => row.name === 'shop/claude-1')?.server_gone === true, 'the session marked');
    const sent = runCli(['send', 'while the server is gone', '--to', 'shop/claude-1', '--json'], { env: bus.env });
    assert.equal(sent.code, 0, sent.stderr);
    const id = json<{ message_ids: string[] }>(sent).message_ids[0] as string;
    assert.equal(json<{ state: string }>(runCli(['status', id, '--json'], { env: bus.env })).state, 'sent');
    assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-1 .*\(its server is gone: its hooks reach nothing\)/);
    assert.match(runCli(['doctor'], { env: bus.env }).stdout, /warn +sessions: 1 session\(s\) whose client runs on without its agent-bus server \(shop\/claude-1\)/);
    if (browser !== null) {
      const web = await startWeb(bus);
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(web.url);
        const badge = page.locator('li.agent', { hasText: 'shop/claude-1' }).locator('.badge.server-gone');
        await badge.waitFor({ timeout: 10_000 });
        assert.equal(await badge.textContent(), 'server gone: hooks unheard');
      } finally {
        await context.close();
        await web.stop();
      }
    }
    client.kill('SIGKILL');
    await waitUntil(() => rows().find((row) => row.name === 'shop/claude-1')?.server_gone === false, 'the mark gone with the client');
  } finally {
    client.kill('SIGKILL');
  }
}));
