/**
 * Wake latency: from a send to the exit of the session's `hook-watch` (which
 * has by then taken the mail and said it), over 200 sends. The watcher is
 * started and given time to settle before each send, as a client starts it
 * at the end of a turn; the poll is set long, so only events can wake it fast.
 */
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { registrationsFor } from '../src/core/roster.js';
import { openBus, openStoreAt } from '../src/runtime.js';
import { CLI, median, quantile, round, spawnTracked, type Engine, type Workspace } from './util.js';
import type { HookFigure } from './hooks.js';

const SENDS = 200;

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export async function wakeLatency(ws: Workspace, engine: Engine = 'sqlite'): Promise<HookFigure & { p99: number }> {
  const location = await ws.bus(`wake-latency-${engine}`, engine);
  const name = 'bench-repo/claude';
  const bus = openBus(location.env);
  await bus.roster.register(registrationsFor(name, location.home, true));
  await bus.roster.register(registrationsFor('human', location.home, true));
  // Whether the watcher has settled, read from the store as any process would.
  const store = openStoreAt(location.db, location.env);
  const env = { ...location.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: location.home, CLAUDE_CODE_ENTRYPOINT: 'cli', AGENT_BUS_WATCH_POLL_SECONDS: '30', AGENT_BUS_WAKES_PER_HOUR: '0' };
  const delays: number[] = [];
  try {
    for (let index = 0; index < SENDS; index++) {
      const watcher = spawnTracked(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '60'], { env, cwd: location.home, stdio: ['pipe', 'ignore', 'ignore'] });
      const done = exited(watcher);
      watcher.stdin?.end(JSON.stringify({ session_id: 'bench-session' }));
      // Settled: it has claimed the session (and looked at the inbox once, finding nothing).
      const claimed = Date.now();
      while (!(await store.watchers()).some((watcher) => watcher.agent.startsWith(name))) {
        if (Date.now() - claimed > 10_000) throw new Error('the watcher never started');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await new Promise((resolve) => setTimeout(resolve, 30));
      const started = performance.now();
      await bus.mail.send({ from: 'human', to: name, body: `wake ${index}` });
      const code = await done;
      delays.push(performance.now() - started);
      if (code !== 10) throw new Error(`the watcher exited ${code}, not 10`);
    }
    if ((await bus.inbox.pending(name)) !== 0) throw new Error('mail was left unread');
  } finally {
    await store.close();
    await bus.close();
  }
  const p50 = median(delays);
  const p99 = quantile(delays, 0.99);
  return {
    value: round(p50, 2),
    p99: round(p99, 2),
    shown: `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    details: { sends: SENDS, p50Ms: round(p50, 2), p99Ms: round(p99, 2), maxMs: round(Math.max(...delays), 2) },
  };
}
