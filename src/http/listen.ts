/** Start a listener and say where it is: the hub and `agent-bus web` both listen this way. */
import type { Server } from 'node:http';
import { BusError } from '../model/errors.js';

/** Listen on host:port (0: a free port); the base URL it answers at, or a one-line error. */
export async function listenOn(server: Server, host: string, port: number, busyHint: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new BusError(error.code === 'EADDRINUSE' ? `cannot listen on ${host}:${port}: the port is in use (${busyHint})` : `cannot listen on ${host}:${port}: ${error.message}`)),
    );
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}
