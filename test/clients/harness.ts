/** What the real-client tests share: a local HTTP server that records requests, and a client run with a hard timeout. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CLI, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';

export interface FakeServer {
  url: string;
  /** Bodies of the model requests, in order. */
  requests: string[];
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, raw: string, res: http.ServerResponse) => void;

/** A server on a random 127.0.0.1 port; `handle` answers each request once its body has arrived. */
export async function listen(handle: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => handle(req, raw, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

export function parseBody<T>(raw: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return {} as T;
  }
}

export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a client binary to completion, killed by its PID if it outlives `timeoutMs`. */
export function runClient(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<ClientRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface WiredRepo {
  bus: TempBus;
  repo: string;
}

/**
 * A git repo named `shop`, wired for `client` by our own `agent-bus init`, on a
 * private bus where the human and `shop/<client>` are already known (as after
 * an earlier session), so mail to either is accepted before the client starts.
 */
export function wiredRepo(client: string): WiredRepo {
  const bus = tempBus();
  const repo = join(bus.dir, 'shop');
  mkdirSync(repo);
  // Codex trusts a project only inside a real git repository; the others accept one too.
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  // Init asks the real Claude Code its version, as it would on a user's machine: the wake hook is wired too.
  const claude = join(ROOT, 'clients', 'node_modules', '.bin', 'claude');
  assert.equal(runCli(['init', '--clients', client, '--bin-path', CLI], { env: { ...bus.env, AGENT_BUS_CLAUDE_BIN: claude }, cwd: repo }).code, 0);
  for (const [name, home] of [['human', bus.dir], [`shop/${client}`, repo]] as const) {
    const env = { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: home };
    runCli(['send', 'joining', '--to', name], { env });
    runCli(['inbox'], { env });
  }
  return { bus, repo };
}

/** Markers of the three notices `publishTestNotices` puts on the bus. */
export const NOTICE_MARKERS = { critical: 'CRITICAL-NOTICE-MARKER', info: 'INFO-NOTICE-MARKER', unsubscribed: 'UNSUBSCRIBED-NOTICE-MARKER' } as const;

/**
 * A critical notice on `amygdala` and an info one on `brain` (the two channels
 * init subscribes a repo to), and a critical one on `ops`, which it does not.
 */
export function publishTestNotices(bus: TempBus): void {
  for (const [channel, message, severity] of [
    ['amygdala', NOTICE_MARKERS.critical, 'critical'],
    ['brain', NOTICE_MARKERS.info, 'info'],
    ['ops', NOTICE_MARKERS.unsubscribed, 'critical'],
  ]) {
    const published = runCli(['channel', 'publish', channel as string, message as string, '-s', severity as string], { env: bus.env });
    assert.equal(published.code, 0, published.stderr);
  }
}

/** The environment a Claude Code run needs against a fake model: offline, no telemetry, no updates. */
export function claudeEnv(bus: TempBus, modelUrl: string): NodeJS.ProcessEnv {
  return { ...bus.env, ...claudeOffline(modelUrl) };
}

/** Where the pinned real clients are installed (npm run test:clients). */
export const CLIENT_BIN = join(ROOT, 'clients', 'node_modules', '.bin');

/** What keeps a Claude Code run offline against a fake model: no telemetry, no updates. */
export function claudeOffline(modelUrl: string): NodeJS.ProcessEnv {
  return {
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'dummy',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

/** `codex exec` in `repo` against a fake Responses API, its state in `codexHome`, trusting the project and its hooks. */
export function runCodexIn(repo: string, codexHome: string, env: NodeJS.ProcessEnv, modelUrl: string, prompt: string): Promise<ClientRun> {
  mkdirSync(codexHome, { recursive: true });
  const args = [
    'exec', '--trust', '--dangerously-bypass-hook-trust', '--json',
    '-c', 'model=fake-model', '-c', 'model_provider=fake',
    '-c', `model_providers.fake={name="fake",base_url="${modelUrl}/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`,
    prompt,
  ];
  return runClient(join(CLIENT_BIN, 'codex'), args, repo, { ...env, CODEX_HOME: codexHome, OPENAI_API_KEY: 'dummy' });
}

/**
 * `opencode run` in `repo` against a fake chat completions server. The fake provider goes in the
 * user's config under `home` (its XDG folders), so the project files stay exactly what init wrote.
 */
export function runOpencodeIn(repo: string, home: string, env: NodeJS.ProcessEnv, modelUrl: string, prompt: string): Promise<ClientRun> {
  const config = join(home, '.config');
  mkdirSync(join(config, 'opencode'), { recursive: true });
  writeFileSync(
    join(config, 'opencode', 'opencode.json'),
    JSON.stringify({
      model: 'fake/fake-model',
      small_model: 'fake/fake-model',
      autoupdate: false,
      share: 'disabled',
      provider: {
        fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake', options: { baseURL: `${modelUrl}/v1`, apiKey: 'dummy' }, models: { 'fake-model': { name: 'Fake Model', tool_call: true } } },
      },
    }),
  );
  return runClient(join(CLIENT_BIN, 'opencode'), ['run', '--format', 'json', prompt], repo, {
    ...env,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
  });
}
