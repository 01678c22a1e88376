/**
 * Shared pieces of the benchmark: statistics, the private temp workspace,
 * subprocess bookkeeping (every child is killed when the benchmark ends, however
 * it ends) and a timeout for each section.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPostgres, stopPostgres, type StartedPostgres } from '../scripts/postgres.mjs';

export const ROOT = resolve(new URL('..', import.meta.url).pathname);

/** The built CLI: whatever package.json's `bin` names (dist/cli.js unless the build says otherwise). */
export const CLI = ((): string => {
  try {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: string | Record<string, string> };
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.['agent-bus'];
    if (bin) return join(ROOT, bin);
  } catch {
    // Fall through to the historical location.
  }
  return join(ROOT, 'dist', 'cli.js');
})();

// ---------------------------------------------------------------- statistics

/** The q-quantile (0..1) of the values, by linear interpolation between closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const a = sorted[low] as number;
  const b = sorted[high] as number;
  return a + (b - a) * (position - low);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Thrown by a section that cannot be measured on this Node.js (a figure of the built-in SQLite driver
 * on Node.js 20, say): the figure is reported as skipped, with the reason, and is neither met nor missed.
 */
export class NotMeasurableHere extends Error {}

// ---------------------------------------------------------------- workspace

export type Engine = 'sqlite' | 'postgres';

export interface Workspace {
  dir: string;
  /**
   * A fresh bus location (HOME, database, audit log) under the workspace, with its subprocess
   * environment. On PostgreSQL, a new database of a server the benchmark starts (with
   * PostgreSQL's own durability settings) the first time one is asked for.
   */
  bus(name: string, engine?: Engine): Promise<BusLocation>;
  cleanup(): void;
}

export interface BusLocation {
  engine: Engine;
  home: string;
  /** A SQLite file, or a PostgreSQL URL. */
  db: string;
  audit: string;
  /** Exactly what a subprocess sees: nothing from the real HOME leaks in. */
  env: NodeJS.ProcessEnv;
}

export function createWorkspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-bench-'));
  let removed = false;
  let server: Promise<StartedPostgres> | null = null;
  let started: StartedPostgres | null = null;
  let databases = 0;
  return {
    dir,
    async bus(name, engine = 'sqlite') {
      const home = join(dir, name, 'home');
      mkdirSync(home, { recursive: true });
      const folder = join(dir, name, 'bus');
      const audit = join(folder, 'audit.log');
      let db = join(folder, 'bus.db');
      if (engine === 'postgres') {
        server ??= startPostgres({ durable: true }).then((running) => (started = running));
        const running = await server;
        const database = `bench_${++databases}`;
        const created = spawnSync(join(running.bin, 'psql'), ['-X', '-q', '-d', running.url, '-c', `CREATE DATABASE ${database}`], { encoding: 'utf8' });
        if (created.status !== 0) throw new Error(`cannot create a benchmark database: ${created.stderr}`);
        const url = new URL(running.url);
        url.pathname = `/${database}`;
        db = url.toString();
        mkdirSync(folder, { recursive: true, mode: 0o700 });
      }
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: home,
        AGENT_BUS_DB: db,
        AGENT_BUS_AUDIT_LOG: audit,
        ...(engine === 'postgres' ? { AGENT_BUS_HOME: folder } : {}),
        NO_COLOR: '1',
      };
      return { engine, home, db, audit, env };
    },
    cleanup() {
      if (removed) return;
      removed = true;
      // The server goes with the workspace (stopped synchronously: this runs at exit too).
      if (started) stopPostgres(started.dir, started.bin);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- subprocesses

const children = new Set<ChildProcess>();

/** Start a child that is killed when the benchmark exits, if it is still running. */
export function spawnTracked(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function killChildren(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

/** Wait for a child to exit, killing it hard if it takes longer than `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolveExit();
    });
  });
}

/** Wall time of one synchronous run of `node args`, in milliseconds; throws when it fails. */
export function timeNode(args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs = 30_000): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
  const elapsed = performance.now() - start;
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`node ${args.join(' ')} exited with ${result.status ?? result.signal}: ${result.stderr.toString().trim()}`);
  }
  return elapsed;
}

// ---------------------------------------------------------------- time

export const sleep = (ms: number): Promise<void> => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

export class TimeoutError extends Error {}

/** Run `work`, failing with a TimeoutError after `ms` (the work itself is not interrupted). */
export async function withTimeout<T>(label: string, ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${label} did not finish within ${Math.round(ms / 1000)} s`)), ms);
  });
  try {
    return await Promise.race([work(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Let pending I/O callbacks and timers run (keeps a long synchronous loop from starving them). */
export const yieldToLoop = (): Promise<void> => new Promise((resolveYield) => setImmediate(resolveYield));

export function progress(message: string): void {
  process.stdout.write(`  … ${message}\n`);
}

/** `node ARGS` with `input` on stdin, timed; it must exit 0 and say nothing on stderr (a hook that warns is not measured). */
export function timedQuiet(args: string[], env: NodeJS.ProcessEnv, cwd: string, input: string): { ms: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { env, cwd, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr.toString()}`);
  const stderr = result.stderr.toString();
  if (stderr.trim() !== '') throw new Error(`node ${args.join(' ')} warned: ${stderr.trim()}`);
  return { ms, stdout: result.stdout.toString() };
}
