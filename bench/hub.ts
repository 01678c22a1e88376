/**
 * The hub's figures over loopback: an MCP send_message round trip over
 * Streamable HTTP from a connected client, and sends per second with 50
 * agents, each with its own token, posting at once (one tools/call per
 * request, as a hook or a remote CLI would). A real `serve --http` process.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { registrationsFor } from '../src/core/roster.js';
import { openBus } from '../src/runtime.js';
import { sendRoundTrips } from './mcp.js';
import { CLI, median, quantile, round, spawnTracked, waitForExit, withTimeout, type Engine, type Workspace } from './util.js';

export interface HubFigures {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

interface BenchHub {
  url: string;
  /** The hub's own environment (its bus). */
  env: NodeJS.ProcessEnv;
  token(name: string): string;
  stop(): Promise<void>;
}

async function startBenchHub(ws: Workspace, name: string, engine: Engine, extra: NodeJS.ProcessEnv = {}): Promise<BenchHub> {
  const location = await ws.bus(name, engine);
  // The rate limit is the hub's defence, not what is measured: lifted for the run.
  const env = { ...location.env, AGENT_BUS_HTTP_RATE: '1000000', ...extra };
  const child = spawnTracked(process.execPath, [CLI, 'serve', '--http', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const url = await withTimeout('the hub starting', 15_000, () =>
    new Promise<string>((resolve) => {
      const look = (): void => {
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1] as string);
      };
      child.stdout?.on('data', look);
    }),
  );
  return {
    url,
    env: location.env,
    token(agent) {
      const made = spawnSync(process.execPath, [CLI, 'token', 'create', agent, '--json'], { env, encoding: 'utf8' });
      if (made.status !== 0) throw new Error(`token create failed: ${made.stderr}`);
      return (JSON.parse(made.stdout) as { token: string }).token;
    },
    async stop() {
      child.kill('SIGTERM');
      await waitForExit(child, 15_000);
    },
  };
}

export async function hubRoundTrip(ws: Workspace, engine: Engine = 'sqlite'): Promise<HubFigures> {
  const WARMUP = 200;
  const CALLS = 1_000;
  const hub = await startBenchHub(ws, `hub-round-trip-${engine}`, engine);
  const token = hub.token('bench/sender');
  hub.token('bench/receiver');
  const client = new Client({ name: 'agent-bus-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    return await sendRoundTrips(client, 'bench/receiver', WARMUP, CALLS, { engine });
  } finally {
    await client.close();
    await hub.stop();
  }
}

export async function hubSendThroughput(ws: Workspace, engine: Engine = 'sqlite'): Promise<HubFigures> {
  const AGENTS = 50;
  const SECONDS = 5;
  const hub = await startBenchHub(ws, `hub-throughput-${engine}`, engine);
  hub.token('bench/inbox');
  const tokens = Array.from({ length: AGENTS }, (_, index) => hub.token(`bench/agent${index}`));
  let id = 0;
  // The agents are node:http on kept-alive connections: on a machine of two cores, the load
  // generator's own cost (fetch costs several times more) comes out of the hub's.
  const agent = new http.Agent({ keepAlive: true, maxSockets: AGENTS * 2 });
  const mcp = new URL(`${hub.url}/mcp`);
  const post = (token: string): Promise<boolean> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'send_message', arguments: { to: 'bench/inbox', body: 'throughput' } } });
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body) };
      const request = http.request({ agent, host: mcp.hostname, port: mcp.port, path: mcp.pathname, method: 'POST', headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(response.statusCode === 200 && !text.includes('"isError":true')));
      });
      request.on('error', reject);
      request.end(body);
    });
  try {
    // Every agent once first: the hub registers each, and connections open.
    await Promise.all(tokens.map((token) => post(token)));
    let sent = 0;
    let failed = 0;
    const started = performance.now();
    const deadline = started + SECONDS * 1000;
    await Promise.all(
      tokens.map(async (token) => {
        while (performance.now() < deadline) {
          if (await post(token)) sent++;
          else failed++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    if (failed > 0) throw new Error(`${failed} of ${sent + failed} sends failed`);
    // Every acknowledged send is in the hub's store (the first round's too).
    const bus = openBus(hub.env);
    try {
      const stored = await bus.inbox.pending('bench/inbox');
      if (stored !== sent + AGENTS) throw new Error(`the hub acknowledged ${sent + AGENTS} sends, and its store holds ${stored}`);
    } finally {
      await bus.close();
    }
    const perSecond = sent / elapsed;
    return {
      value: Math.round(perSecond),
      shown: `${Math.round(perSecond).toLocaleString('en-US')} sends/s (${AGENTS} agents, ${sent} sends)`,
      details: { engine, agents: AGENTS, seconds: round(elapsed, 2), sends: sent },
    };
  } finally {
    agent.destroy();
    await hub.stop();
  }
}

function timedRun(args: string[], env: NodeJS.ProcessEnv, input: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { env, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr.toString()}`);
  return elapsed;
}

/** One POST /v1/hook over node:net and nothing else: what any remote hook costs at the least. */
const BARE_HOOK_REQUEST = `
const url = new URL(process.env.AGENT_BUS_URL);
const body = JSON.stringify({ kind: 'prompt', client: 'claude', session_key: 'bench-session', subscriptions: { all: false, channels: [] } });
const socket = require('node:net').connect(Number(url.port), url.hostname, () => socket.write('POST /v1/hook HTTP/1.1\\r\\nhost: ' + url.host + '\\r\\nauthorization: Bearer ' + process.env.AGENT_BUS_TOKEN + '\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n' + body));
let answer = '';
socket.on('data', (chunk) => (answer += chunk));
socket.on('end', () => { if (!answer.startsWith('HTTP/1.1 200')) { console.error(answer.slice(0, 200)); process.exit(1); } });
`;

/** A remote `hook-user-prompt` with an empty inbox (one request to a loopback hub), against `node -e 0`. */
export async function remoteHookStartup(ws: Workspace, engine: Engine = 'sqlite'): Promise<HubFigures> {
  const RUNS = 30;
  const WARMUP = 3;
  const hub = await startBenchHub(ws, `hub-remote-hook-${engine}`, engine);
  const remote = await ws.bus(`hub-remote-hook-${engine}-machine`);
  // The other machine: a HOME and the hub's address, no database.
  const env = { PATH: process.env.PATH, HOME: remote.home, NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: hub.token('bench/claude') };
  const payload = JSON.stringify({ session_id: 'bench-session', hook_event_name: 'UserPromptSubmit' });
  const hookArgs = [CLI, 'hook-user-prompt', '--client', 'claude'];
  // The floor of "one Node start and one HTTP request": the same request from a script of a few lines.
  const floorArgs = ['-e', BARE_HOOK_REQUEST];
  const hookTimes: number[] = [];
  const bareTimes: number[] = [];
  const floorTimes: number[] = [];
  try {
    for (let run = 0; run < WARMUP + RUNS; run++) {
      const first = run % 2 === 0;
      const a = first ? timedRun(hookArgs, env, payload) : timedRun(['-e', '0'], env, '');
      const b = first ? timedRun(['-e', '0'], env, '') : timedRun(hookArgs, env, payload);
      const floor = timedRun(floorArgs, env, '');
      if (run < WARMUP) continue;
      hookTimes.push(first ? a : b);
      bareTimes.push(first ? b : a);
      floorTimes.push(floor);
    }
  } finally {
    await hub.stop();
  }
  const ratio = median(hookTimes) / median(bareTimes);
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${median(hookTimes).toFixed(1)} vs ${median(bareTimes).toFixed(1)} ms; a bare script making the same request: ${median(floorTimes).toFixed(1)} ms)`,
    details: {
      engine,
      runs: RUNS,
      hookMedianMs: round(median(hookTimes)),
      nodeMedianMs: round(median(bareTimes)),
      bareRequestMedianMs: round(median(floorTimes)),
      extraMs: round(median(hookTimes) - median(bareTimes)),
    },
  };
}

/**
 * Remote wake latency: from a send on the hub's bus to the exit of a `hook-watch` on a machine
 * without the database, waiting at a loopback hub. The hub's fallback poll is set long, so only
 * its change feed can answer fast.
 */
export async function remoteWakeLatency(ws: Workspace, engine: Engine = 'sqlite'): Promise<HubFigures> {
  const SENDS = 100;
  const hub = await startBenchHub(ws, `hub-remote-wake-${engine}`, engine, { AGENT_BUS_WATCH_POLL_SECONDS: '30', AGENT_BUS_WAKES_PER_HOUR: '0' });
  const token = hub.token('bench/claude');
  const remote = await ws.bus(`hub-remote-wake-${engine}-machine`);
  const env = { PATH: process.env.PATH, HOME: remote.home, NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token, CLAUDE_CODE_ENTRYPOINT: 'cli' };
  const bus = openBus(hub.env);
  await bus.roster.register(registrationsFor('human', remote.home, true));
  const waitsOpen = async (): Promise<number> => Number(/^agent_bus_waits_open (\d+)$/m.exec(await (await fetch(`${hub.url}/metrics`)).text())?.[1] ?? 0);
  const delays: number[] = [];
  try {
    for (let index = 0; index < SENDS; index++) {
      const watcher = spawnTracked(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '60'], { env, stdio: ['pipe', 'ignore', 'ignore'] });
      const done = new Promise<number | null>((resolve) => watcher.once('exit', (code) => resolve(code)));
      watcher.stdin?.end(JSON.stringify({ session_id: 'bench-session' }));
      const asked = Date.now();
      while ((await waitsOpen()) < 1) {
        if (Date.now() - asked > 10_000) throw new Error('the remote watcher never waited at the hub');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      const started = performance.now();
      await bus.mail.send({ from: 'human', to: 'bench/claude', body: `wake ${index}` });
      const code = await done;
      delays.push(performance.now() - started);
      if (code !== 10) throw new Error(`the remote watcher exited ${code}, not 10`);
    }
  } finally {
    await bus.close();
    await hub.stop();
  }
  const p50 = median(delays);
  const p99 = quantile(delays, 0.99);
  return {
    value: round(p50, 2),
    shown: `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    details: { engine, sends: SENDS, p50Ms: round(p50, 2), p99Ms: round(p99, 2), maxMs: round(Math.max(...delays), 2) },
  };
}

/**
 * A GitHub delivery (a workflow_run failure) posted to the hub's integration endpoint over
 * loopback until the hub has stored the message it makes: the hub answers once it has, so each
 * round trip is the figure. Each delivery has its own id, so none is a replay.
 */
export async function integrationDelivery(ws: Workspace, engine: Engine = 'sqlite'): Promise<HubFigures> {
  const WARMUP = 100;
  const CALLS = 1_000;
  const hub = await startBenchHub(ws, `integration-delivery-${engine}`, engine);
  hub.token('shop/claude');
  const made = spawnSync(process.execPath, [CLI, 'integration', 'add', 'github', '--kind', 'github', '--to', '{repo}', '--json'], { env: hub.env, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`integration add failed: ${made.stderr}`);
  const secret = (JSON.parse(made.stdout) as { secret: string }).secret;
  const body = JSON.stringify({
    action: 'completed',
    workflow_run: { name: 'CI', run_number: 42, conclusion: 'failure', head_branch: 'main', head_sha: '3f2c1e0a9b', event: 'push', html_url: 'https://github.com/acme/shop/actions/runs/9' },
    repository: { name: 'shop', full_name: 'acme/shop' },
    sender: { login: 'alice' },
  });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(`${hub.url}/v1/integrations/github`);
  const post = (id: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-github-event': 'workflow_run', 'x-github-delivery': `bench-${id}`, 'x-hub-signature-256': signature };
      const request = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      request.on('error', reject);
      request.end(body);
    });
  try {
    const times: number[] = [];
    for (let index = 0; index < WARMUP + CALLS; index++) {
      const start = performance.now();
      const status = await post(index);
      if (status !== 200) throw new Error(`delivery ${index} was answered ${status}`);
      if (index >= WARMUP) times.push(performance.now() - start);
    }
    const stored = spawnSync(process.execPath, [CLI, 'inbox', '--name', 'shop/claude', '--json', '--peek', '--limit', '5000'], { env: hub.env, encoding: 'utf8' });
    const count = (JSON.parse(stored.stdout) as Array<{ from: string }>).filter((message) => message.from === 'github').length;
    if (count !== WARMUP + CALLS) throw new Error(`${count} of ${WARMUP + CALLS} deliveries were stored as mail`);
    const p50 = median(times);
    return { value: round(p50, 3), shown: `p50 ${p50.toFixed(2)} ms, p95 ${quantile(times, 0.95).toFixed(2)} ms (${engine})`, details: { engine, calls: CALLS, p50Ms: round(p50, 3), p95Ms: round(quantile(times, 0.95), 3) } };
  } finally {
    agent.destroy();
    await hub.stop();
  }
}
