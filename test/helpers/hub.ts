/** A hub as a real `agent-bus serve --http` process on a free loopback port, and an MCP client over HTTP. */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, runCli, tempBus, type TempBus } from './bus-env.js';
import { waitUntil } from './wait.js';

export interface RunningHub {
  url: string;
  process: ChildProcess;
  /** What the hub printed, both streams. */
  output(): string;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

export async function startHub(bus: TempBus, extraEnv: NodeJS.ProcessEnv = {}, args: string[] = []): Promise<RunningHub> {
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', ...args], { env: { ...bus.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hub did not say it listens within 10 s: ${out}`)), 10_000);
    const look = (): void => {
      const match = /agent-bus hub: listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout.on('data', look);
    void exited.then((code) => reject(new Error(`the hub exited (${code}) before it listened: ${out}`)));
  });
  return {
    url,
    process: child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `agent-bus token create NAME --json` on the hub's machine: the token itself. */
export function createToken(bus: TempBus, name: string, args: string[] = []): { id: string; token: string; expires_at: string | null; name: string } {
  const made = runCli(['token', 'create', name, '--json', ...args], { env: bus.env });
  if (made.code !== 0) throw new Error(`token create failed: ${made.stderr}`);
  return JSON.parse(made.stdout) as { id: string; token: string; expires_at: string | null; name: string };
}

export interface HttpMcp {
  client: Client;
  call(name: string, args?: Record<string, unknown>): Promise<{ value: unknown; isError: boolean; text: string }>;
  close(): Promise<void>;
}

/** An MCP client over Streamable HTTP with a bearer token, as a remote agent's client would hold it. */
export async function connectHttp(url: string, token: string, headers: Record<string, string> = {}): Promise<HttpMcp> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } } });
  const client = new Client({ name: 'remote-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name, args = {}) {
      const result = (await client.callTool({ name, arguments: args })) as { content: Array<{ type: string; text: string }>; isError?: boolean };
      const text = result.content[0]?.text ?? '';
      let value: unknown = text;
      try {
        value = JSON.parse(text);
      } catch {
        value = text;
      }
      return { value, isError: result.isError === true, text };
    },
    close: () => client.close(),
  };
}

/** One raw POST to /mcp: a tools/call with no initialize, as a hook would make it. */
export async function rawCall(url: string, headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, method = 'POST'): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

/**
 * A POST to /mcp whose body arrives in two parts, the second only at
 * `finish()`: until then the hub holds it as a request in flight. Its own
 * connection, so no other request shares it.
 */
export function slowCall(url: string, headers: Record<string, string>, body: unknown): { finish(): void; answer: Promise<{ status: number; body: string }> } {
  const payload = Buffer.from(JSON.stringify(body));
  const half = Math.floor(payload.length / 2);
  const outgoing = request(`${url}/mcp`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(payload.length), connection: 'close', ...headers },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    outgoing.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
  });
  // A test that fails before finish() stops the hub under it: that hang-up is not the failure to report.
  answer.catch(() => undefined);
  outgoing.write(payload.subarray(0, half));
  return { finish: () => outgoing.end(payload.subarray(half)), answer };
}

/** The hub's count of requests it is answering now, not counting the scrape that asks. */
export async function requestsInFlight(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^agent_bus_http_requests_in_flight (\d+)$/m.exec(text);
  if (match === null) throw new Error(`no agent_bus_http_requests_in_flight in /metrics: ${text}`);
  return Number(match[1]) - 1;
}

/** Wait until the hub counts `count` requests waiting (a watcher, a follower, a chat at it). */
export async function untilWaiting(url: string, what: string, count = 1): Promise<void> {
  const pattern = new RegExp(`^agent_bus_waits_open ${count}$`, 'm');
  await waitUntil(async () => pattern.test(await (await fetch(`${url}/metrics`)).text()), `${what} to wait at the hub`, 10_000, 50);
}

/** A `hook-watch` for a Claude Code session on a machine with `env` (its hub and token): what it says, and its exit code. */
export function remoteWatcher(env: NodeJS.ProcessEnv): { said(): string; exited: Promise<number | null> } {
  const watcher = spawn(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '60'], {
    env: { ...env, CLAUDE_CODE_ENTRYPOINT: 'cli' },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let said = '';
  watcher.stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => watcher.on('close', resolve));
  watcher.stdin.end('{"session_id":"s-1"}');
  return { said: () => said, exited };
}

/** A test body on a private bus with a hub running on it (with `extraEnv`), both gone afterwards. */
export function withHub(extraEnv: NodeJS.ProcessEnv, work: (bus: TempBus, hub: RunningHub) => Promise<void>): () => Promise<void> {
  return async () => {
    const bus = tempBus();
    const hub = await startHub(bus, extraEnv);
    try {
      await work(bus, hub);
    } finally {
      await hub.stop();
      bus.cleanup();
    }
  };
}
