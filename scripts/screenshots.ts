/**
 * `npm run screenshots`: the dashboard's pictures in docs/, taken from a real
 * `agent-bus web` over a scratch bus with a small fleet on it (two running
 * MCP server sessions, one of them working, mail, a claimed repo-wide message,
 * tasks, a reservation and a collision, notices, a brain feed and wake.json),
 * in headless Chromium: the first screen at desktop size in both themes, and
 * on a phone.
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

function cli(args: string[], extra: NodeJS.ProcessEnv = {}, input = '{}'): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, cwd: scratch, input, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`agent-bus ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const servers: ChildProcess[] = [];
try {
  // Two running Claude Code sessions in webapp: each MCP server claims a session address.
  const webapp = join(scratch, 'webapp');
  mkdirSync(join(webapp, '.git'), { recursive: true });
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
  // What needs a person: tasks waiting, mail to maria not read yet, a reservation and a collision.
  const notes = cli(['task', 'add', 'Write the release notes for 2.4', '--to', 'docs/opencode']).trim();
  cli(['task', 'add', 'Tag the 2.4 release candidate', '--to', 'webapp/codex', '--after', notes]);
  const focus = cli(['task', 'add', 'Fix the focus bug on the login form', '--to', 'webapp']).trim();
  cli(['task', 'take', focus, '--name', 'webapp/claude-1']);
  const done = cli(['task', 'add', 'Review the /v2/session change', '--to', 'api-server/claude']).trim();
  cli(['task', 'take', done, '--name', 'api-server/claude']);
  cli(['task', 'done', done, '--result', 'Approved; the client handles the 401.', '--name', 'api-server/claude']);
  say('webapp/claude-1', 'maria', 'The focus fix is ready and its test passes: may I merge it into main?', review);
  cli(['reserve', 'src/login/form.tsx', '--reason', 'fixing the focus bug', '--ttl', '2h', '--name', 'webapp/claude-1', '--repo', webapp]);
  // The working session's prompt hook says it is working; two agents editing one file make a collision.
  cli(['hook-user-prompt', '--client', 'claude'], { AGENT_BUS_NAME: 'webapp/claude-1', AGENT_BUS_REPO: webapp });
  for (const name of ['webapp/claude-2', 'webapp/codex']) {
    const edit = { session_id: `s-${name}`, cwd: webapp, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: join(webapp, 'src/api/client.ts'), old_string: 'a', new_string: 'b' } };
    cli(['hook-pre-tool', '--client', 'claude'], { AGENT_BUS_NAME: name, AGENT_BUS_REPO: webapp }, JSON.stringify(edit));
  }

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
    // The first screen, as a person opening the dashboard sees it.
    const shots: Array<{ file: string; width: number; height: number; dark: boolean }> = [
      { file: 'dashboard-desktop.png', width: 1280, height: 800, dark: false },
      { file: 'dashboard-dark.png', width: 1280, height: 800, dark: true },
      { file: 'dashboard-phone.png', width: 390, height: 844, dark: false },
    ];
    for (const shot of shots) {
      const context = await browser.newContext({ viewport: { width: shot.width, height: shot.height }, colorScheme: shot.dark ? 'dark' : 'light', deviceScaleFactor: shot.width < 500 ? 2 : 1 });
      const page = await context.newPage();
      await page.goto(url);
      await page.locator('#live.on').waitFor();
      await page.locator('#thread-list button.thread').first().waitFor();
      await page.locator('#collision-list li.collision').waitFor();
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(import.meta.dirname, '..', 'docs', shot.file) });
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
