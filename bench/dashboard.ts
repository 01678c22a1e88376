/**
 * The dashboard on a large bus (1,000,000 messages, 10,000 agents, an audit
 * log of 100,000 rows): a real `agent-bus web` process, each view of its API
 * asked over HTTP as the page asks it, and the page itself loaded in headless
 * Chromium until the roster, the threads and the pictures are drawn. The
 * figure is the slower of the slowest view's p50 and the page's p50. Every
 * ask is a fresh one: none is answered from the dashboard's shared answers.
 */
import { once } from 'node:events';
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { formatStamp, nowMicros } from '../src/model/clock.js';
import { CHROMIUM, launchBrowser } from '../test/helpers/browser.js';
import { largeBus } from './seed.js';
import { CLI, median, progress, round, spawnTracked, type BusLocation, type Engine, type Workspace } from './util.js';

const AUDIT_ROWS = 100_000;
const RUNS = 7;
const PAGE_LOADS = 5;

/** Audit rows as sends write them, oldest first, so Activity and Wake read a log of real size. */
function writeAuditLog(location: BusLocation): void {
  mkdirSync(dirname(location.audit), { recursive: true, mode: 0o700 });
  const start = nowMicros() - AUDIT_ROWS * 1_000_000;
  const batch: string[] = [];
  for (let index = 0; index < AUDIT_ROWS; index++) {
    const repo = `repo-${index % 1000}`;
    batch.push(
      JSON.stringify({
        ts: formatStamp(start + index * 1_000_000),
        op: index % 50 === 0 ? 'wake' : index % 3 === 0 ? 'read' : 'send',
        actor: `${repo}/claude`,
        message_id: `m${index}`,
        from: `${repo}/claude`,
        to: `repo-${(index + 7) % 1000}/codex`,
        thread_id: `t${index % 5000}`,
        body_preview: 'please review the login form before merge',
        body_sha256: null,
        ...(index % 50 === 0 ? { wake_driver: 'command', wake_status: 'fired' } : {}),
      }),
    );
    if (batch.length === 5_000) {
      appendFileSync(location.audit, `${batch.join('\n')}\n`, { mode: 0o600 });
      batch.length = 0;
    }
  }
}

async function startWeb(location: BusLocation): Promise<{ origin: string; url: string; cookie: string; stop(): Promise<void> }> {
  const child = spawnTracked(process.execPath, [CLI, 'web', '--no-open', '--port', '0'], { env: location.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`agent-bus web printed no URL: ${out}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /agent-bus web: (\S+)\n/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    });
    child.once('exit', (code) => reject(new Error(`agent-bus web exited (${code}): ${out}`)));
  });
  const parsed = new URL(url);
  return {
    origin: parsed.origin,
    url,
    cookie: `agent_bus_dashboard_${parsed.port}=${parsed.searchParams.get('key')}`,
    async stop() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

export async function dashboardViews(ws: Workspace, engine: Engine = 'sqlite'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { location, seed } = await largeBus(ws, engine, 'dashboard', { messages: 1_000_000, repos: 1_000, readers: 10 });
  writeAuditLog(location);
  const web = await startWeb(location);
  try {
    const ask = async (path: string): Promise<unknown> => {
      const response = await fetch(`${web.origin}${path}`, { headers: { cookie: web.cookie, 'accept-encoding': 'gzip' } });
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return path.startsWith('/api/') ? response.json() : response.arrayBuffer();
    };
    const threads = (await ask('/api/threads')) as { threads: Array<{ threadId: string; copies: number }> };
    const biggest = [...threads.threads].sort((a, b) => b.copies - a.copies)[0]?.threadId ?? '';
    const views = [
      '/',
      '/app.js',
      '/api/me',
      '/api/roster',
      '/api/roster?offset=500&filter=codex',
      '/api/activity',
      '/api/activity?agent=repo-7&op=send',
      '/api/threads',
      `/api/threads?before=${Math.floor(seed.messages / 2)}`,
      `/api/thread?id=${encodeURIComponent(biggest)}`,
      '/api/names?q=repo-99',
      '/api/notices',
      '/api/brain',
      '/api/wake',
      '/api/mail',
    ];
    const p50s: Record<string, number> = {};
    for (const view of views) {
      const times: number[] = [];
      for (let run = 0; run < RUNS + 1; run++) {
        // A query of its own each run: the dashboard shares an answer while the bus is still, and this measures the view, not that.
        const asked = view.startsWith('/api/') ? `${view}${view.includes('?') ? '&' : '?'}run=${run}` : view;
        const started = performance.now();
        await ask(asked);
        if (run > 0) times.push(performance.now() - started);
      }
      p50s[view] = round(median(times), 2);
    }
    const [slowest, slowestMs] = Object.entries(p50s).sort((a, b) => b[1] - a[1])[0] as [string, number];
    progress(`slowest view ${slowest}: ${slowestMs} ms`);

    let pageMs: number | null = null;
    if (CHROMIUM !== null) {
      const browser = await launchBrowser();
      try {
        const loads: number[] = [];
        for (let run = 0; run < PAGE_LOADS + 1; run++) {
          const context = await browser.newContext();
          const page = await context.newPage();
          const started = performance.now();
          await page.goto(web.url);
          await page.locator('#roster-list details.repo').first().waitFor({ timeout: 30_000 });
          await page.locator('#thread-list li').first().waitFor({ timeout: 30_000 });
          await page.locator('#mail-chart svg').waitFor({ timeout: 30_000 });
          await page.locator('#activity-list li').first().waitFor({ timeout: 30_000 });
          if (run > 0) loads.push(performance.now() - started);
          await context.close();
        }
        pageMs = round(median(loads), 1);
      } finally {
        await browser.close();
      }
    }
    const value = Math.max(slowestMs, pageMs ?? 0);
    return {
      value: round(value, 1),
      shown: `slowest view ${slowestMs.toFixed(1)} ms (${slowest.split('?')[0]}), page ready ${pageMs === null ? 'n/a (no Chromium)' : `${pageMs.toFixed(0)} ms`}`,
      details: { messages: seed.messages, agents: seed.agents, auditRows: AUDIT_ROWS, runs: RUNS, viewP50Ms: p50s, pageReadyP50Ms: pageMs, pageLoads: PAGE_LOADS },
    };
  } finally {
    await web.stop();
  }
}
