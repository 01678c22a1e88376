/**
 * Test scaffolding: every test gets its own HOME, database and audit log in a
 * temp folder, and drives the built CLI as a real subprocess.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);
export const CLI = join(ROOT, 'dist', 'bin', 'cli.cjs');

export interface TempBus {
  dir: string;
  db: string;
  audit: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/** A private bus: HOME, AGENT_BUS_DB and AGENT_BUS_AUDIT_LOG under a fresh temp folder. */
export function tempBus(extraEnv: NodeJS.ProcessEnv = {}): TempBus {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-test-'));
  const db = join(dir, 'bus', 'bus.db');
  const audit = join(dir, 'bus', 'audit.log');
  mkdirSync(join(dir, 'home'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(dir, 'home'),
    AGENT_BUS_DB: db,
    AGENT_BUS_AUDIT_LOG: audit,
    NO_COLOR: '1',
    ...extraEnv,
  };
  return { dir, db, audit, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
}

export function runCli(args: string[], options: CliOptions): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: options.env,
    cwd: options.cwd ?? options.env.HOME ?? ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Run the CLI without blocking the test's event loop (for concurrency tests). */
export function runCliAsync(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: options.env,
      cwd: options.cwd ?? options.env.HOME ?? ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export function readAudit(path: string): Array<Record<string, unknown>> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Parse the single JSON document a `--json` command printed. */
export function json<T = unknown>(result: CliResult): T {
  if (result.code !== 0) throw new Error(`command failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A test body run against a fresh private bus, removed afterwards. */
export function withTempBus(work: (bus: TempBus) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const bus = tempBus();
    try {
      await work(bus);
    } finally {
      bus.cleanup();
    }
  };
}
