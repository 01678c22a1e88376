/**
 * Waking an idle interactive Claude Code, end to end: the real client in tmux against a scripted model,
 * wired by init. Each wake is timed from the send's commit to the model request that carries the mail,
 * through the session's inbox socket (its MCP server posts), and in the same run through the watcher (the
 * server given no socket). Between wakes the session finishes its turn and sits idle, and the processes
 * of ours that wait beside it are counted.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { openBus } from '../src/runtime.js';
import { claude } from '../test/clients/drivers.js';
import { modelSaw, serverEnv, wiredRepo } from '../test/clients/harness.js';
import { interactiveSkip, startInteractiveClaude, type InteractiveClaude } from '../test/clients/interactive.js';
import { sleep, waitUntil } from '../test/helpers/wait.js';
import { CLI, median, NotMeasurableHere, round } from './util.js';

const WAKES = 5;

/** The last operations of the audit log, for a figure that could not be measured. */
function auditTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-6).map((line) => {
      const row = JSON.parse(line) as { op: string; wake_driver?: string; wake_status?: string };
      return row.op === 'wake' ? `wake ${row.wake_driver ?? ''} ${row.wake_status ?? ''}` : row.op;
    }).join(', ');
  } catch (error) {
    return (error as Error).message;
  }
}

/** The processes of ours that run beside a session: its MCP server and any watcher. */
function waitingProcesses(): number {
  const listed = spawnSync('pgrep', ['-af', `${CLI} (serve|hook-watch)`], { encoding: 'utf8' }).stdout;
  return listed.split('\n').filter((line) => line.trim() !== '').length;
}

async function wakes(way: 'socket' | 'watcher'): Promise<{ ms: number[]; processes: number[] }> {
  const s = wiredRepo('claude');
  if (way === 'watcher') serverEnv(s, { CLAUDE_CODE_MESSAGING_SOCKET: '' });
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const bus = openBus(s.bus.env);
  let session: InteractiveClaude | undefined;
  const ms: number[] = [];
  const processes: number[] = [];
  try {
    session = await startInteractiveClaude(s, model.url, { AGENT_BUS_WAKES_PER_HOUR: '0' });
    session.type('hello, first prompt');
    await waitUntil(() => model.requests.length >= 1, 'the first turn', 60_000, 50);
    const ready = async (): Promise<boolean> => {
      const watchers = await bus.wakes.watchers();
      return watchers.some((row) => (way === 'socket' ? row.way === 'socket' : row.way === 'watch')) && (await bus.inbox.pending('shop/claude')) === 0;
    };
    for (let index = 0; index < WAKES; index++) {
      // Idle again: the turn has ended and the way under test waits; a moment for the client to reach its prompt.
      await waitUntil(ready, `the session idle with its ${way} waiting`, 60_000, 50);
      await sleep(1500);
      processes.push(waitingProcesses());
      const body = `bench wake ${way} ${index} ${Date.now()}`;
      const before = model.requests.length;
      const sentAt = performance.now();
      await bus.mail.send({ from: 'shop/codex', to: 'shop/claude', body });
      const pane = session.pane;
      await waitUntil(() => modelSaw(body, model.requests.slice(before)), () => `a model request carrying wake ${index + 1}'s mail (the audit ends: ${auditTail(s.bus.audit)}; the screen: ${pane().trim().split('\n').slice(-6).join(' / ')})`, 30_000, 2);
      ms.push(performance.now() - sentAt);
    }
  } finally {
    await session?.stop();
    await model.close();
    await bus.close();
    try {
      s.bus.cleanup();
    } catch {
      // A straggler still writing: the temp folder goes with the machine's.
    }
  }
  return { ms, processes };
}

interface Measured {
  socket: { ms: number[]; processes: number[] };
  watcher: { ms: number[]; processes: number[] };
}

/** Both ways, measured once a run: the latency and the process count are two figures of one measurement. */
let measured: Promise<Measured> | undefined;
function measure(): Promise<Measured> {
  if (interactiveSkip !== false) return Promise.reject(new NotMeasurableHere(interactiveSkip));
  measured ??= (async () => ({ socket: await wakes('socket'), watcher: await wakes('watcher') }))();
  return measured;
}

export async function claudeWake(): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { socket, watcher } = await measure();
  const p50 = round(median(socket.ms), 0);
  return {
    value: p50,
    shown: `${p50} ms through the socket, ${round(median(watcher.ms), 0)} ms through the watcher (p50 of ${WAKES} each)`,
    details: { socketMs: socket.ms.map((value) => round(value, 0)), watcherMs: watcher.ms.map((value) => round(value, 0)) },
  };
}

/** The processes of ours beside an idle session woken through the socket: the most seen between wakes. */
export async function claudeWakeProcesses(): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { socket, watcher } = await measure();
  const most = Math.max(...socket.processes);
  return {
    value: most,
    shown: `${most} through the socket (${Math.max(...watcher.processes)} with the watcher)`,
    details: { socketSamples: socket.processes, watcherSamples: watcher.processes },
  };
}
