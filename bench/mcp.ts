/**
 * The MCP server's figures: a send_message round trip from a connected client
 * over stdio, the server's resident memory when idle, and its time from spawn
 * to ready (the client's initialize handshake completed).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CLI, median, quantile, round, sleep, type Workspace } from './util.js';

interface Connected {
  client: Client;
  transport: StdioClientTransport;
  readyMs: number;
}

/** An MCP server over stdio as `name`, working in `cwd`; `extra` adds to (or overrides) its environment. */
export async function connectServer(env: NodeJS.ProcessEnv, cwd: string, name: string, extra: NodeJS.ProcessEnv = {}): Promise<Connected> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve'],
    env: { ...env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: cwd, ...extra } as Record<string, string>,
    cwd,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'agent-bus-bench', version: '1.0.0' });
  const started = performance.now();
  await client.connect(transport);
  return { client, transport, readyMs: performance.now() - started };
}

function residentMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

export interface McpFigures {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

export async function mcpRoundTrip(ws: Workspace): Promise<McpFigures> {
  const WARMUP = 200;
  const CALLS = 2_000;
  const location = await ws.bus('mcp-round-trip');
  const receiver = await connectServer(location.env, location.home, 'bench-receiver');
  const sender = await connectServer(location.env, location.home, 'bench-sender');
  try {
    return await sendRoundTrips(sender.client, 'bench-receiver', WARMUP, CALLS);
  } finally {
    await sender.client.close();
    await receiver.client.close();
  }
}

export async function mcpIdleMemory(ws: Workspace): Promise<McpFigures> {
  const location = await ws.bus('mcp-memory');
  const server = await connectServer(location.env, location.home, 'bench-idle');
  try {
    // One call of each kind, then idle: what a session costs while its agent thinks.
    await server.client.callTool({ name: 'whoami', arguments: {} });
    await server.client.callTool({ name: 'read_inbox', arguments: {} });
    await sleep(1_500);
    const pid = server.transport.pid;
    if (pid === null) throw new Error('the server has no pid');
    const mib = residentMiB(pid);
    return { value: round(mib, 1), shown: `${mib.toFixed(1)} MiB resident`, details: { residentMiB: round(mib, 1) } };
  } finally {
    await server.client.close();
  }
}

export async function mcpStartup(ws: Workspace): Promise<McpFigures> {
  const RUNS = 10;
  const location = await ws.bus('mcp-startup');
  const times: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const server = await connectServer(location.env, location.home, `bench-start-${run}`);
    if (run > 0) times.push(server.readyMs);
    await server.client.close();
  }
  const p50 = median(times);
  return {
    value: round(p50, 1),
    shown: `p50 ${p50.toFixed(0)} ms (max ${Math.max(...times).toFixed(0)})`,
    details: { runs: RUNS, p50Ms: round(p50, 1), minMs: round(Math.min(...times), 1), maxMs: round(Math.max(...times), 1) },
  };
}

/** send_message round trips from a connected client, one after another, after `warmup` untimed ones. */
export async function sendRoundTrips(client: Client, to: string, warmup: number, calls: number, details: Record<string, unknown> = {}): Promise<McpFigures> {
  const call = () => client.callTool({ name: 'send_message', arguments: { to, body: 'round trip' } });
  for (let index = 0; index < warmup; index++) await call();
  const times: number[] = [];
  for (let index = 0; index < calls; index++) {
    const started = performance.now();
    const result = await call();
    times.push(performance.now() - started);
    if (result.isError) throw new Error(`send_message failed: ${JSON.stringify(result.content)}`);
  }
  const p50 = median(times);
  const p99 = quantile(times, 0.99);
  return {
    value: round(p50, 3),
    shown: `p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`,
    details: { ...details, calls, warmup, p50Ms: round(p50, 3), p99Ms: round(p99, 3), maxMs: round(Math.max(...times), 3) },
  };
}
