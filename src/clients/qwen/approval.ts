/**
 * Whether Qwen Code on this machine has approved a repo's agent-bus server. Qwen Code starts a
 * project's MCP server only once its user approved it (outside --yolo), and keeps each decision in
 * ~/.qwen/mcpApprovals.json, by project folder and server name, bound to a sha256 of the server's
 * entry as JSON with its keys sorted: an edited entry (init written again with other subscriptions)
 * is asked about again.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { isObject, readJsonConfig } from '../config-files.js';
import { SERVER_KEY } from '../wiring.js';

/** The fields Qwen Code leaves out of the hash: where an entry came from, and its label. */
const NOT_HASHED = new Set(['scope', 'extensionName', 'description']);

/** The hash Qwen Code binds an approval to. */
export function entryHash(entry: Record<string, unknown>): string {
  const kept = Object.fromEntries(Object.entries(entry).filter(([key]) => !NOT_HASHED.has(key)));
  const sorted = JSON.stringify(kept, (_key, value: unknown) =>
    isObject(value) ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, value[key]])) : value,
  );
  return createHash('sha256').update(sorted).digest('hex');
}

/** What is wrong with this machine's approval of the repo's agent-bus server, or null (approved, or nothing to approve). */
export function approvalProblem(repo: string, home: string, settingsPath: string): string | null {
  const settings = readJsonConfig(settingsPath);
  const entry = settings.kind === 'ok' && isObject(settings.value.mcpServers) ? settings.value.mcpServers[SERVER_KEY] : undefined;
  if (!isObject(entry)) return null;
  const approvals = readJsonConfig(join(home, '.qwen', 'mcpApprovals.json'));
  const project = approvals.kind === 'ok' ? approvals.value[resolve(repo)] : undefined;
  const record = isObject(project) ? project[SERVER_KEY] : undefined;
  if (!isObject(record)) return 'Qwen Code has not been asked to approve its agent-bus server here yet';
  if (record.status === 'rejected') return 'Qwen Code was told to reject its agent-bus server';
  if (record.hash !== entryHash(entry)) return 'its agent-bus server changed since Qwen Code approved it';
  return record.status === 'approved' ? null : 'Qwen Code has not approved its agent-bus server';
}
