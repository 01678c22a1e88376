/**
 * The inbox socket the Pi extension opens for its session: the listening side of the frames the
 * session's MCP server posts when mail comes while the session is idle (wake/session-socket.ts, the
 * same two lines Claude Code's own socket takes: an auth line with the session's token, then a user
 * message). Each message that comes after a matching token is handed on; anything else is dropped.
 * The socket lives in a folder of its own that only this user can enter, and goes with it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface InboxSocket {
  path: string;
  token: string;
  close(): Promise<void>;
}

/** The most a connection may send: a nudge is one short line. */
const MAX_BYTES = 64 * 1024;

/** The text of a user frame (`{"type":"user","message":{"content":…}}`), or null for any other line. */
export function userFrameText(line: string): string | null {
  try {
    const frame = JSON.parse(line) as { type?: unknown; message?: { content?: unknown } };
    return frame.type === 'user' && typeof frame.message?.content === 'string' && frame.message.content.trim() !== '' ? frame.message.content : null;
  } catch {
    return null;
  }
}

/** Whether a line is the auth frame carrying `token`. */
function authorises(line: string, token: string): boolean {
  try {
    const frame = JSON.parse(line) as { type?: unknown; token?: unknown };
    return frame.type === 'auth' && frame.token === token;
  } catch {
    return false;
  }
}

/** Open the socket; `deliver` gets the text of each message a poster with the token sends. */
export async function openInboxSocket(deliver: (text: string) => void): Promise<InboxSocket> {
  // mkdtemp makes the folder 0700: no other user can reach the socket inside it.
  const folder = mkdtempSync(join(tmpdir(), 'agent-bus-pi-'));
  const path = join(folder, 'inbox.sock');
  const token = randomBytes(16).toString('hex');
  const connections = new Set<Socket>();
  const server = createServer((connection) => {
    connections.add(connection);
    let buffered = '';
    let received = 0;
    let authorised = false;
    connection.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_BYTES) {
        connection.destroy();
        return;
      }
      buffered += chunk.toString('utf8');
      let end = buffered.indexOf('\n');
      while (end >= 0) {
        const line = buffered.slice(0, end).trim();
        buffered = buffered.slice(end + 1);
        end = buffered.indexOf('\n');
        if (line === '') continue;
        if (!authorised) {
          authorised = authorises(line, token);
          if (!authorised) connection.destroy();
          continue;
        }
        const text = userFrameText(line);
        if (text !== null) deliver(text);
      }
    });
    connection.on('error', () => undefined);
    connection.on('close', () => connections.delete(connection));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  server.on('error', () => undefined);
  // A wake is a courtesy: the socket never keeps the client's process alive.
  server.unref();
  // Pi may quit before its shutdown handler's close has run (print mode exits at its run's end): the
  // folder goes with the process however it ends, so no dead socket is left behind in the temp folder.
  const removeFolder = (): void => rmSync(folder, { recursive: true, force: true });
  process.once('exit', removeFolder);
  return {
    path,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.destroy();
        server.close(() => {
          process.removeListener('exit', removeFolder);
          removeFolder();
          resolve();
        });
      }),
  };
}
