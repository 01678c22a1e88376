/**
 * Where a session's subscriptions came from, for the status line and brain
 * status: its environment, read against the settings files Claude Code merges
 * into it (`.claude/settings.local.json`, `.claude/settings.json`,
 * `~/.claude/settings.json`) and the bus folder's `.env`. Hooks never call
 * this: they need the value, not its origin, and read the environment alone.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { busDotEnv, dotEnvPath } from '../core/dot-env.js';
import type { Env } from '../core/settings.js';
import { subscriptionSource, type SettingsFileLayer, type SubscriptionSource } from '../core/subscriptions.js';

/** A JSON settings file's `env` block; empty when the file is missing, unreadable or has none. */
function envBlock(path: string): Record<string, unknown> {
  try {
    const value = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
    const env = (value as Record<string, unknown>).env;
    return env !== null && typeof env === 'object' && !Array.isArray(env) ? (env as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Claude Code's settings files for a repo, highest precedence first. */
export function claudeSettingsLayers(repo: string | null, home: string): SettingsFileLayer[] {
  const layers: SettingsFileLayer[] = [];
  if (repo !== null) {
    layers.push({ layer: 'repo-local', where: '.claude/settings.local.json', env: envBlock(join(repo, '.claude', 'settings.local.json')) });
    layers.push({ layer: 'repo', where: '.claude/settings.json', env: envBlock(join(repo, '.claude', 'settings.json')) });
  }
  if (home !== '') layers.push({ layer: 'user', where: '~/.claude/settings.json', env: envBlock(join(home, '.claude', 'settings.json')) });
  return layers;
}

/**
 * Which layer set this session's subscriptions. `claude` says whether Claude Code's settings files
 * apply (a Claude Code session, or a shell that may be one), and the repo whose files they are.
 */
export function sessionSubscriptionSource(env: Env, claude: { repo: string | null } | null): SubscriptionSource {
  const files = claude === null ? [] : claudeSettingsLayers(claude.repo, env.HOME || homedir());
  return subscriptionSource(env, files, busDotEnv(env), dotEnvPath(env));
}
