/**
 * One JSON request to the hub, with Node's own http/https (loaded on first use:
 * a hook pays for nothing it does not send) and a deadline for the whole exchange.
 */
import { createRequire } from 'node:module';
import type { HubAccess } from './settings.js';

export class HubUnreachable extends Error {}

export interface HubResponse {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

const load = createRequire(import.meta.url);

export function hubRequest(access: HubAccess, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<HubResponse> {
  let target: URL;
  try {
    target = new URL(`${access.url}${path}`);
  } catch {
    return Promise.reject(new HubUnreachable(`'${access.url}' is not a URL`));
  }
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return Promise.reject(new HubUnreachable(`'${access.url}' is not an http or https URL`));
  const transport = load(secure ? 'node:https' : 'node:http') as typeof import('node:http');
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body), 'utf8');
  return new Promise((resolve, reject) => {
    const request = transport.request(
      target,
      {
        method,
        headers: {
          authorization: `Bearer ${access.token}`,
          accept: 'application/json, text/event-stream',
          ...(data === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(data.length) }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? null : JSON.parse(text);
          } catch {
            parsed = text;
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers });
        });
        response.on('error', (error) => reject(new HubUnreachable(error.message)));
      },
    );
    const timer = setTimeout(() => request.destroy(new HubUnreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(error instanceof HubUnreachable ? error : new HubUnreachable(error.code === 'ECONNREFUSED' ? 'connection refused' : error.message));
    });
    request.end(data);
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
