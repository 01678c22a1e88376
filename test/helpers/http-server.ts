/** A local HTTP server for tests that stand in for a service (a model, a brain): one handler, called once a request's body has arrived. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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

/** Answer with `value` as JSON. */
export function json(res: http.ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** A request body as JSON, or an empty object when it is not JSON. */
export function parseBody<T>(raw: string): T {
  try {
    return JSON.parse(raw) as T;
  } catch {
    return {} as T;
  }
}
