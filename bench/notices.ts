/**
 * Notices on the hot path: `hook-pre-tool` runs before every tool call of
 * every agent. Measured with 10,000 live notices in the store: 200 channels
 * (the global notices among them) full to their cap of 50, one in fifty
 * critical and one in five an alert, the session subscribed to seven channels;
 * as a ratio to a bare `node -e 0` in the same run, and the filter itself, in
 * process (also for a session subscribed to every channel, without a goal).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { buildNotice } from '../src/core/notice-ops.js';
import { nowMicros } from '../src/model/clock.js';
import { noticeCaps, type NoticeMoment } from '../src/core/notices.js';
import { parseSubscriptions } from '../src/core/subscriptions.js';
import { renderNotice } from '../src/hooks/notice-text.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { CLI, median, quantile, round, type BusLocation, type Workspace } from './util.js';
import { floorArgs, floorDetails, floorText, holdBusOpen, type HookFigure } from './hooks.js';

export const LIVE_NOTICES = 10_000;
const CHANNELS = 200;
const PER_CHANNEL = LIVE_NOTICES / CHANNELS;
const SUBSCRIPTIONS = 'brain,amygdala,ch-1,ch-2,ch-3,ch-4,ch-5';

/** Seed the store directly, every channel at its cap of PER_CHANNEL (publishing 10,000 would take a while). */
async function seed(location: BusLocation): Promise<void> {
  const bus = openBus(location.env);
  const seeding = new SqliteStore(location.db);
  try {
    const db = seeding.connection;
    const insert = db.prepare(
      `INSERT INTO notices (notice_id, channel, severity, title, body, source, priority, content_hash, created_at, expires_at)
       VALUES (@noticeId, @channel, @severity, @title, @body, @source, @priority, @contentHash, @createdAt, @expiresAt)`,
    );
    db.immediate(() => {
      for (let index = 0; index < LIVE_NOTICES; index++) {
        const slot = index % CHANNELS;
        const channel = slot === 0 ? null : slot === 1 ? 'brain' : slot === 2 ? 'amygdala' : `ch-${slot}`;
        // One in fifty is critical, one in five an alert, the rest info.
        const severity = index % 50 === 0 ? 'critical' : index % 5 === 0 ? 'alert' : 'info';
        insert.run({ ...buildNotice({ channel, severity, message: `notice ${index}: replica lag on db-${index % 13} is ${index % 9}s`, ttl: '4h' }, nowMicros()) });
      }
    });
    await bus.roster.register(registrationsFor('bench-repo/claude', location.home, true));
  } finally {
    await seeding.close();
    await bus.close();
  }
}

function timed(args: string[], env: NodeJS.ProcessEnv, cwd: string, input: string): { ms: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { env, cwd, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr.toString()}`);
  return { ms, stdout: result.stdout.toString() };
}

export async function preToolStartup(ws: Workspace): Promise<HookFigure> {
  const RUNS = 30;
  const WARMUP = 3;
  const location = await ws.bus('pre-tool-10k');
  await seed(location);
  const env = { ...location.env, AGENT_BUS_NAME: 'bench-repo/claude', AGENT_BUS_REPO: location.home, AGENT_BUS_CHANNELS: SUBSCRIPTIONS };
  const payload = JSON.stringify({ session_id: 'bench-session', cwd: location.home, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
  const hookArgs = [CLI, 'hook-pre-tool', '--client', 'claude'];
  const floor = floorArgs(location);
  const hookTimes: number[] = [];
  const bareTimes: number[] = [];
  const floorTimes: number[] = [];
  let shown = '';
  const held = await holdBusOpen(location);
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // Each goes first, second and third in turn.
    const kinds = floor === null ? (['hook', 'node'] as const) : (['hook', 'node', 'floor'] as const);
    for (let step = 0; step < kinds.length; step++) {
      const which = kinds[(step + run) % kinds.length];
      const result = which === 'hook' ? timed(hookArgs, env, location.home, payload) : timed(which === 'node' ? ['-e', '0'] : (floor ?? []), env, location.home, '');
      if (which === 'hook') shown = result.stdout;
      if (run >= WARMUP) (which === 'hook' ? hookTimes : which === 'node' ? bareTimes : floorTimes).push(result.ms);
    }
  }
  await held.close();
  if (!shown.includes('[CRITICAL]')) throw new Error(`the hook showed no critical notice: ${shown.slice(0, 300)}`);
  const ratio = median(hookTimes) / median(bareTimes);
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${median(hookTimes).toFixed(1)} vs ${median(bareTimes).toFixed(1)} ms${floorText(floorTimes, bareTimes)})`,
    details: {
      runs: RUNS,
      liveNotices: LIVE_NOTICES,
      subscriptions: SUBSCRIPTIONS,
      hookMedianMs: round(median(hookTimes)),
      nodeMedianMs: round(median(bareTimes)),
      extraMs: round(median(hookTimes) - median(bareTimes)),
      ...floorDetails(floorTimes),
    },
  };
}

/** The filter alone: deciding what one session sees among 10,000 live notices, at a tool call and at a turn. */
export async function noticeFilter(ws: Workspace): Promise<HookFigure> {
  const RUNS = 300;
  const location = await ws.bus('filter-10k');
  await seed(location);
  const bus = openBus(location.env);
  const subscriptions = parseSubscriptions({ AGENT_BUS_CHANNELS: SUBSCRIPTIONS });
  const caps = noticeCaps({});
  const everything = parseSubscriptions({ AGENT_BUS_CHANNELS: '*' });
  const times: Record<NoticeMoment, number[]> = { 'pre-tool': [], prompt: [], 'session-start': [] };
  const wildcard: number[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      for (const moment of ['pre-tool', 'prompt'] as const) {
        const started = performance.now();
        const selection = await bus.notices.deliver({ moment, session: 'bench-session', subscriptions, caps, usedBytes: 0, render: renderNotice });
        times[moment].push(performance.now() - started);
        if (selection.shown.length === 0) throw new Error(`nothing due at ${moment}`);
      }
      const started = performance.now();
      await bus.notices.deliver({ moment: 'prompt', session: 'bench-wildcard', subscriptions: everything, caps, usedBytes: 0, render: renderNotice });
      wildcard.push(performance.now() - started);
    }
  } finally {
    await bus.close();
  }
  const p50 = Math.max(median(times['pre-tool']), median(times.prompt));
  return {
    value: round(p50, 3),
    shown: `pre-tool ${median(times['pre-tool']).toFixed(2)} ms, prompt ${median(times.prompt).toFixed(2)} ms (p50)`,
    details: {
      runs: RUNS,
      liveNotices: LIVE_NOTICES,
      preToolP50Ms: round(median(times['pre-tool']), 3),
      preToolP99Ms: round(quantile(times['pre-tool'], 0.99), 3),
      promptP50Ms: round(median(times.prompt), 3),
      promptP99Ms: round(quantile(times.prompt, 0.99), 3),
      // Each prompt shows this session the next 8 info notices (with their receipts) until it has seen them all.
      everyChannelPromptP50Ms: round(median(wildcard), 3),
      perChannel: PER_CHANNEL,
    },
  };
}
