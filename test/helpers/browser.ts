/**
 * Headless Chromium for the dashboard's tests: Debian's own browser (never a
 * download), driven by playwright-core, with the flags a machine without a
 * network or a GPU needs. And `agent-bus web` as a real process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { CLI, type TempBus } from './bus-env.js';

/** The real binary first: /usr/bin/chromium is a shell wrapper that prints noise. */
export const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((path) => existsSync(path)) ?? null;

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchBrowser(): Promise<Browser> {
  if (CHROMIUM === null) throw new Error('no Chromium here: apt-get install chromium (.ci/run does)');
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
}

export interface RunningWeb {
  /** The printed URL, key and all. */
  url: string;
  /** The URL without the key: where the dashboard is. */
  origin: string;
  key: string;
  process: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
}

/** `agent-bus web --no-open --port 0` on the bus, once it has printed its URL. */
export async function startWeb(bus: TempBus, extraEnv: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<RunningWeb> {
  const child = spawn(process.execPath, [CLI, 'web', '--no-open', '--port', '0', ...args], { env: { ...bus.env, ...extraEnv }, cwd: bus.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent-bus web printed no URL within 10 s: ${out}`)), 10_000);
    const look = (): void => {
      const match = /^agent-bus web: (http:\/\/\S+)\n/m.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', look);
    void exited.then((code) => reject(new Error(`agent-bus web exited (${code}) before it printed its URL: ${out}`)));
  });
  const parsed = new URL(url);
  return {
    url,
    origin: parsed.origin,
    key: parsed.searchParams.get('key') ?? '',
    process: child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
