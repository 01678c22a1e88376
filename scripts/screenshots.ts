/**
 * `npm run screenshots`: the dashboard's pictures in docs/, taken from a real
 * `agent-bus web` over a scratch bus with a small fleet on it (two running
 * MCP server sessions, mail, a claimed repo-wide message, notices, a brain
 * feed and wake.json), in headless Chromium at desktop and phone widths.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '../test/helpers/browser.js';

const CLI = join(import.meta.dirname, '..', 'dist', 'bin', 'cli.cjs');
const scratch = mkdtempSync(join(tmpdir(), 'agent-bus-screenshots-'));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: scratch,
  AGENT_BUS_HOME: join(scratch, 'bus'),
  AGENT_BUS_DB: join(scratch, 'bus', 'bus.db'),
  AGENT_BUS_AUDIT_LOG: join(scratch, 'bus', 'audit.log'),
  AGENT_BUS_NAME: 'maria',
  NO_COLOR: '1',
};

function cli(args: string[], extra: NodeJS.ProcessEnv = {}): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, cwd: scratch, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`agent-bus ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const servers: ChildProcess[] = [];
try {
  // Two running Claude Code sessions in webapp: each MCP server claims a session address.
  const webapp = join(scratch, 'webapp');
  mkdirSync(webapp, { recursive: true });
  for (let index = 0; index < 2; index++) {
    const { AGENT_BUS_NAME: _name, ...serverEnv } = env;
    servers.push(spawn(process.execPath, [CLI, 'serve', '--client', 'claude'], { env: serverEnv, cwd: webapp, stdio: ['pipe', 'ignore', 'ignore'] }));
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const say = (from: string, to: string, body: string, thread?: string): string => {
    const sent = JSON.parse(cli(['send', body, '--to', to, '--name', from, '--json', ...(thread ? ['--thread', thread] : [])])) as { thread_id: string };
    return sent.thread_id;
  };
  for (const name of ['webapp/codex', 'api-server/claude', 'api-server/codex', 'docs/opencode', 'infra/claude']) say(name, '*', `${name} is on the bus`);
  const review = say('maria', 'webapp/claude-1', 'Please review the login form before it merges: the error states look off on mobile.');
  say('webapp/claude-1', 'maria', 'Reviewed. Two issues: the password field loses focus after an error, and the banner is not announced to screen readers. Fixing both now.', review);
  say('webapp/claude-1', 'webapp/codex', 'Can you add a test for the focus bug? I am changing the form markup.', review);
  say('webapp/codex', 'webapp/claude-1', 'Test added in login.spec.ts; it fails on main and passes on your branch.', review);
  const api = say('api-server/claude', 'webapp', 'Heads up: /v2/session now returns 401 with a JSON body instead of a redirect.');
  cli(['inbox', '--name', 'webapp/claude-2']);
  say('webapp/claude-2', 'api-server/claude', 'Thanks, handled in the client: it shows the sign-in form again.', api);
  say('infra/claude', 'api-server/codex', 'The staging database restarts at 17:00 UTC; expect a minute of errors.');
  say('docs/opencode', 'maria', 'The README now has the dashboard screenshots.');
  cli(['inbox', '--name', 'maria']);
  cli(['channel', 'publish', 'ops', 'Deploy freeze until the release is cut', '-s', 'critical', '--ttl', '2h', '--source', 'infra/claude']);
  cli(['channel', 'publish', 'ci', 'main is green again after the flaky migration fix', '-s', 'info', '--ttl', '45m']);
  cli(['notice', 'Office hours with the platform team at 15:00', '-s', 'alert', '--ttl', '3h']);
  const feed = join(scratch, 'bus', 'brain-feed');
  mkdirSync(feed, { recursive: true });
  writeFileSync(join(feed, 'arcs.md'), '---\ntitle: Active arcs\nseverity: alert\nttl: 3600\n---\nThe login redesign ships this week; the API v2 cut-over follows.\n');
  writeFileSync(join(feed, 'oncall.md'), '---\ntitle: On call\nseverity: info\n---\nPriya is on call for the API until Friday.\n');
  cli(['brain', 'refresh']);
  writeFileSync(join(scratch, 'bus', 'wake.json'), JSON.stringify({ 'webapp/codex': 'true', 'api-server': 'true', docs: false }, null, 2));
  say('maria', 'webapp/codex', 'When the focus test is merged, please tag the release candidate.');
  say('maria', 'api-server/codex', 'Please check the 401 handling in the mobile client too.');

  const web = spawn(process.execPath, [CLI, 'web', '--no-open', '--port', '0'], { env, cwd: scratch, stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(web);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    web.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /agent-bus web: (\S+)\n/.exec(out);
      if (match) resolve(match[1] as string);
    });
    web.once('exit', (code) => reject(new Error(`agent-bus web exited (${code})`)));
  });
  const browser = await launchBrowser();
  try {
    const shots: Array<{ file: string; width: number; height: number; dark: boolean; full: boolean }> = [
      { file: 'dashboard-desktop.png', width: 1440, height: 900, dark: false, full: true },
      { file: 'dashboard-dark.png', width: 1440, height: 900, dark: true, full: false },
      { file: 'dashboard-phone.png', width: 375, height: 812, dark: false, full: false },
    ];
    for (const shot of shots) {
      const context = await browser.newContext({ viewport: { width: shot.width, height: shot.height }, colorScheme: shot.dark ? 'dark' : 'light', deviceScaleFactor: shot.width < 500 ? 2 : 1 });
      const page = await context.newPage();
      await page.goto(url);
      await page.locator('#live.on').waitFor();
      await page.locator('#thread-list button.thread').first().waitFor();
      if (shot.file === 'dashboard-desktop.png') {
        await page.locator('#thread-list button.thread', { hasText: 'Test added' }).click();
        await page.locator('#thread-sends li.send').first().waitFor();
      }
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(import.meta.dirname, '..', 'docs', shot.file), fullPage: shot.full });
      await context.close();
      process.stdout.write(`docs/${shot.file}\n`);
    }
  } finally {
    await browser.close();
  }
} finally {
  for (const child of servers) child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 300));
  rmSync(scratch, { recursive: true, force: true });
}
