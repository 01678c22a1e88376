/**
 * The dashboard's files: one page, one script, one style sheet and an icon,
 * built into dist/web and served from memory, compressed once. Nothing is
 * loaded from anywhere else, so the page works offline, and the
 * Content-Security-Policy says so to the browser.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { BusError } from '../../model/errors.js';

/** Only this page's own script and style; no inline code, no frames, no form posting elsewhere. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every dashboard answer. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

interface Asset {
  type: string;
  plain: Buffer;
  gzip: Buffer;
}

let loaded: Map<string, Asset> | null = null;

/** The built files are not where the build puts them. */
export class MissingAssetsError extends BusError {}

/** The built files, read once. Both the CLI's bundles (dist/bin/commands) and the library (dist/http/dashboard) sit two folders below dist. */
function assets(): Map<string, Asset> {
  if (loaded !== null) return loaded;
  const folder = `${join(import.meta.dirname, '..', '..', 'web')}/`;
  const found = new Map<string, Asset>();
  for (const [path, { file, type }] of Object.entries(FILES)) {
    let plain: Buffer;
    try {
      plain = readFileSync(`${folder}${file}`);
    } catch {
      throw new MissingAssetsError(`the dashboard's files are missing from ${folder} (npm run build makes them)`);
    }
    found.set(path, { type, plain, gzip: gzipSync(plain, { level: 9 }) });
  }
  loaded = found;
  return found;
}

/** Fail at start, not at the first visit, when the files are not there. */
export function checkAssets(): void {
  assets();
}

export function isAssetPath(path: string): boolean {
  return Object.hasOwn(FILES, path);
}

export function serveAsset(req: IncomingMessage, res: ServerResponse, path: string): void {
  const asset = assets().get(path);
  if (asset === undefined) return;
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const body = gzip ? asset.gzip : asset.plain;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': asset.type,
    'content-length': String(body.length),
    'cache-control': 'no-cache',
    vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
