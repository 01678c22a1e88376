/**
 * One JSON request to the hub, with Node's own net (http) or https, loaded on first
 * use (a hook pays for nothing it does not send), and a deadline for the whole exchange.
 */
import { createRequire } from 'node:module';
import type { HubAccess } from '../adapters/hub-access.js';
import { quoted } from '../model/quote.js';
import { NAME_HEADER } from '../protocol/hub.js';

export class HubUnreachable extends Error {}

export interface HubResponse {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

const load = createRequire(import.meta.filename);

/** The agent's name as a header, when it is one a header can carry (printable ASCII, one line); else none. */
export function nameHeaders(access: HubAccess): Record<string, string> {
  return access.name !== undefined && /^[\x21-\x7e]{1,200}$/.test(access.name) ? { [NAME_HEADER]: access.name } : {};
}

/** `signal`: ends the request early (it rejects with HubUnreachable('aborted')). */
export function hubRequest(access: HubAccess, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number, signal?: AbortSignal): Promise<HubResponse> {
  let target: URL;
  try {
    target = new URL(`${access.url}${path}`);
  } catch {
    return Promise.reject(new HubUnreachable(`${quoted(access.url)} is not a URL`));
  }
  if (/[\r\n]/.test(access.token)) return Promise.reject(new HubUnreachable('the token holds a line break'));
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  if (target.protocol === 'http:') return plainRequest(target, method, access.token, nameHeaders(access), data, timeoutMs, signal);
  if (target.protocol !== 'https:') return Promise.reject(new HubUnreachable(`${quoted(access.url)} is not an http or https URL`));
  const transport = load('node:https') as typeof import('node:https');
  return new Promise((resolve, reject) => {
    const request = transport.request(
      target,
      {
        method,
        headers: {
          authorization: `Bearer ${access.token}`,
          accept: 'application/json, text/event-stream',
          ...nameHeaders(access),
          ...(data === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(data.length) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, body: parseBody(Buffer.concat(chunks).toString('utf8')), headers: response.headers });
        });
        response.on('error', (error) => reject(new HubUnreachable(error.message)));
      },
    );
    const timer = setTimeout(() => request.destroy(new HubUnreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', () => request.destroy(new HubUnreachable('aborted')), { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error instanceof HubUnreachable ? error : new HubUnreachable(describe(error)));
    });
    request.end(data);
  });
}

function parseBody(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return text;
  }
}

function describe(error: NodeJS.ErrnoException): string {
  return error.code === 'ECONNREFUSED' ? 'connection refused' : error.message;
}

/** A chunked body, decoded. */
function unchunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size <= 0) break;
    parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/**
 * Plain HTTP/1.1 over a socket of node:net: what a hook needs of HTTP is one request and one
 * answer, and loading node:http costs a hook as much as the rest of its start-up. The request
 * asks the hub to close the connection, so the answer ends where the stream does.
 */
function plainRequest(target: URL, method: string, token: string, extra: Record<string, string>, data: Buffer | undefined, timeoutMs: number, signal?: AbortSignal): Promise<HubResponse> {
  const net = load('node:net') as typeof import('node:net');
  const head =
    `${method} ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${token}\r\n` +
    Object.entries(extra)
      .map(([header, value]) => `${header}: ${value}\r\n`)
      .join('') +
    'Accept: application/json, text/event-stream\r\nConnection: close\r\n' +
    (data === undefined ? '' : `Content-Type: application/json\r\nContent-Length: ${data.length}\r\n`) +
    '\r\n';
  return new Promise((resolve, reject) => {
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const socket = net.connect({ host, port: Number(target.port || 80) });
    const chunks: Buffer[] = [];
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(error instanceof HubUnreachable ? error : new HubUnreachable(describe(error as NodeJS.ErrnoException)));
    };
    const timer = setTimeout(() => fail(new HubUnreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    signal?.addEventListener('abort', () => fail(new HubUnreachable('aborted')), { once: true });
    socket.setNoDelay(true);
    // Written, not ended: a server reads a half-closed connection as a client gone away.
    socket.on('connect', () => socket.write(data === undefined ? head : Buffer.concat([Buffer.from(head, 'latin1'), data])));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', fail);
    socket.on('close', () => {
      if (settled) return;
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw.subarray(0, Math.max(0, split)).toString('latin1'));
      if (split < 0 || !status) {
        fail(new HubUnreachable(chunks.length === 0 ? 'the connection closed with no answer' : 'the answer is not HTTP'));
        return;
      }
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const headers: Record<string, string> = {};
      for (const line of raw.subarray(0, split).toString('latin1').split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let payload: Buffer = raw.subarray(split + 4);
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) payload = unchunk(payload);
      resolve({ status: Number(status[1]), body: parseBody(payload.toString('utf8')), headers });
    });
  });
}

/** The hub's reason for a refusal, from its JSON error body. */
export function refusal(response: HubResponse): string {
  const body = response.body as { error_description?: unknown; error?: { message?: unknown } | unknown } | null;
  if (body !== null && typeof body === 'object') {
    if (typeof body.error_description === 'string') return body.error_description;
    const error = body.error as { message?: unknown } | undefined;
    if (error && typeof error === 'object' && typeof error.message === 'string') return error.message;
  }
  return `HTTP ${response.status}`;
}
