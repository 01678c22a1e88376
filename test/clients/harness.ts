/** What the real-client tests share: a local HTTP server that records requests, and a client run with a hard timeout. */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
