/**
 * Chat arrival: from a send to the message on the chat's screen (its output
 * stream), over 50 sends. The chat runs as a real process; its fallback poll
 * is 2 s, so figures well under that are the file-system events at work.
 */
import { performance } from 'node:perf_hooks';
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { CLI, median, quantile, round, spawnTracked, type Workspace } from './util.js';
import type { HookFigure } from './hooks.js';

const SENDS = 50;

export async function chatArrival(ws: Workspace): Promise<HookFigure> {
  const location = await ws.bus('chat-arrival');
  const bus = openBus(location.env);
  await bus.roster.register(registrationsFor('alpha', location.home, true));
  await bus.roster.register(registrationsFor('human', location.home, true));
  // Not a terminal: AGENT_BUS_CHAT_FORCE lets the chat run on pipes, its screen the output stream.
  const chat = spawnTracked(process.execPath, [CLI, 'chat'], { env: { ...location.env, AGENT_BUS_CHAT_FORCE: '1' }, cwd: location.home, stdio: ['pipe', 'pipe', 'ignore'] });
  let screen = '';
  let waiter: (() => void) | null = null;
  chat.stdout?.on('data', (chunk: Buffer) => {
    screen += chunk.toString('utf8');
    waiter?.();
  });
  const seen = (text: string, ms: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`'${text}' never reached the chat`)), ms);
      const check = (): void => {
        if (!screen.includes(text)) return;
        clearTimeout(timer);
        waiter = null;
        resolve();
      };
      waiter = check;
      check();
    });
  const delays: number[] = [];
  try {
    await seen('recent activity', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (let index = 0; index < SENDS; index++) {
      const body = `ARRIVAL-${index}-END`;
      const started = performance.now();
      await bus.mail.send({ from: 'alpha', to: 'human', body });
      await seen(body, 5000);
      delays.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    chat.stdin?.end('/quit\n');
    await bus.close();
  }
  const p50 = median(delays);
  return {
    value: round(p50, 2),
    shown: `p50 ${p50.toFixed(1)} ms, p99 ${quantile(delays, 0.99).toFixed(1)} ms`,
    details: { sends: SENDS, p50Ms: round(p50, 2), p99Ms: round(quantile(delays, 0.99), 2), maxMs: round(Math.max(...delays), 2) },
  };
}
