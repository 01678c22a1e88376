/**
 * Tasks: how soon a creator's `agent-bus task wait` returns once the holder's `complete_task` (over
 * MCP, stdio) has answered; and 16 processes racing to take the same tasks, on each engine, where a
 * task taken by two is a double take (goal: none), and each task must be stored with the one taker
 * who was told it has it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { registrationsFor } from '../src/core/roster.js';
import { openBus } from '../src/runtime.js';
import { connectServer } from './mcp.js';
import { lineReader } from './reservations.js';
import { CLI, ROOT, median, quantile, round, spawnTracked, waitForExit, type BusLocation, type Engine, type Workspace } from './util.js';

interface TaskFigure {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

const CREATOR = 'shop/claude';
const HOLDER = 'shop/codex';

/** A `task wait` child, and the moment its one line came (it prints only when the task is closed). */
function waitingCreator(location: BusLocation, id: string): { printed: Promise<{ at: number; line: string }>; child: ReturnType<typeof spawn> } {
  const child = spawnTracked(process.execPath, [CLI, 'task', 'wait', id, '--timeout', '60s', '--json'], {
    env: { ...location.env, AGENT_BUS_NAME: CREATOR },
    cwd: location.home,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const printed = new Promise<{ at: number; line: string }>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', (line) => resolve({ at: performance.now(), line }));
    child.once('exit', (code) => reject(new Error(`task wait exited ${code} before printing`)));
  });
  printed.catch(() => undefined);
  return { printed, child };
}

export async function taskResultLatency(ws: Workspace): Promise<TaskFigure> {
  const WARMUP = 3;
  const RUNS = 30;
  // Long enough for a fresh `task wait` to have read the task and be waiting on the change feed.
  const SETTLE_MS = 400;
  const location = await ws.bus('task-result');
  const bus = openBus(location.env);
  try {
    for (const name of [CREATOR, HOLDER]) await bus.roster.register(registrationsFor(name, location.home, true));
  } finally {
    await bus.close();
  }
  const holder = await connectServer({ ...location.env, AGENT_BUS_SESSIONS: '0' }, location.home, HOLDER);
  const creator = openBus({ ...location.env });
  const text = (result: Awaited<ReturnType<typeof holder.client.callTool>>): string => (result.content as Array<{ text?: string }>)[0]?.text ?? '';
  const times: number[] = [];
  try {
    for (let run = 0; run < WARMUP + RUNS; run++) {
      const task = await creator.tasks.create({ creator: CREATOR, title: `task ${run}`, to: HOLDER });
      const taken = await holder.client.callTool({ name: 'take_task', arguments: { id: task.id } });
      if (taken.isError) throw new Error(`take_task failed: ${text(taken)}`);
      const { printed, child } = waitingCreator(location, task.id);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const started = performance.now();
      const done = await holder.client.callTool({ name: 'complete_task', arguments: { id: task.id, result: `result ${run}` } });
      if (done.isError) throw new Error(`complete_task failed: ${text(done)}`);
      const { at, line } = await printed;
      await waitForExit(child, 10_000);
      const seen = JSON.parse(line) as { state: string; result: string };
      if (seen.state !== 'done' || seen.result !== `result ${run}`) throw new Error(`task wait saw ${line}`);
      if (child.exitCode !== 0) throw new Error(`task wait exited ${child.exitCode}`);
      if (run >= WARMUP) times.push(at - started);
    }
  } finally {
    await creator.close();
    await holder.client.close();
  }
  const p50 = median(times);
  return {
    value: round(p50, 2),
    shown: `p50 ${p50.toFixed(1)} ms, p90 ${quantile(times, 0.9).toFixed(1)} ms (${RUNS} tasks)`,
    details: { runs: RUNS, p50Ms: round(p50), p90Ms: round(quantile(times, 0.9)), maxMs: round(Math.max(...times)) },
  };
}

// ---------------------------------------------------------------- 16 processes racing to take 50 tasks

const RACERS = 16;
const RACE_TASKS = 50;
const RACE_ROUNDS = 3;
const WORKER = join(ROOT, 'bench', 'task-race-worker.mjs');

interface RaceReport {
  taker: string;
  took: string[];
  refused: number;
  errors: string[];
  ms: number;
}

export async function taskRace(ws: Workspace, engine: Engine = 'sqlite'): Promise<TaskFigure> {
  const location = await ws.bus(`task-race-${engine}`, engine);
  let doubleTakes = 0;
  const problems: string[] = [];
  const walls: number[] = [];
  for (let turn = 1; turn <= RACE_ROUNDS; turn++) {
    const repo = `race-${turn}`;
    const setup = openBus(location.env);
    let ids: string[];
    try {
      await setup.roster.register(registrationsFor('human', location.home, true));
      ids = [];
      for (let index = 0; index < RACE_TASKS; index++) ids.push((await setup.tasks.create({ creator: 'human', title: `${repo} task ${index}`, to: '*' })).id);
    } finally {
      await setup.close();
    }
    const workers = Array.from({ length: RACERS }, (_, index) => {
      const taker = `${repo}/agent-${String(index + 1).padStart(2, '0')}`;
      const child = spawnTracked(process.execPath, [WORKER, taker, JSON.stringify(ids), String(turn * 1_000 + index)], { env: location.env, cwd: location.home, stdio: ['pipe', 'pipe', 'pipe'] });
      return { child, next: lineReader(child, taker) };
    });
    let reports: RaceReport[];
    try {
      for (const line of await Promise.all(workers.map(({ next }) => next(60_000)))) if (line !== 'ready') throw new Error(`a racer said ${line}`);
      const pending = workers.map(({ next }) => next(120_000));
      const started = performance.now();
      for (const { child } of workers) child.stdin?.write('go\n');
      reports = (await Promise.all(pending)).map((line) => JSON.parse(line) as RaceReport);
      walls.push(performance.now() - started);
    } finally {
      await Promise.all(workers.map(({ child }) => waitForExit(child, 10_000)));
    }
    const takers = new Map<string, string[]>();
    for (const report of reports) for (const id of report.took) takers.set(id, [...(takers.get(id) ?? []), report.taker]);
    for (const [id, list] of takers) {
      if (list.length > 1) {
        doubleTakes += list.length - 1;
        problems.push(`round ${turn}: task ${id} was taken by ${list.join(' and ')}`);
      }
    }
    // What the store holds afterwards: each task taken by the one racer told it took it.
    const after = openBus(location.env);
    try {
      for (const id of ids) {
        const stored = await after.tasks.get(id);
        const told = takers.get(id) ?? [];
        if (stored.state !== 'taken' || told.length === 0 || !told.includes(stored.holder ?? '')) problems.push(`round ${turn}: task ${id} is ${stored.state} by ${stored.holder}, told to ${told.join(', ') || 'nobody'}`);
      }
    } finally {
      await after.close();
    }
    const errors = reports.flatMap((report) => report.errors);
    if (errors.length > 0) problems.push(`round ${turn}: ${errors.length} takes failed (${errors[0]})`);
  }
  if (doubleTakes === 0 && problems.length > 0) throw new Error(problems.slice(0, 3).join('; '));
  return {
    value: doubleTakes,
    shown: `${doubleTakes} double takes (${RACERS} processes × ${RACE_TASKS} tasks, ${RACE_ROUNDS} rounds; ${round(median(walls) / (RACERS * RACE_TASKS), 3)} ms an attempt)`,
    details: { engine, racers: RACERS, tasks: RACE_TASKS, rounds: RACE_ROUNDS, doubleTakes, problems: problems.slice(0, 5), wallMsMedian: round(median(walls)) },
  };
}
