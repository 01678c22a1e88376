/**
 * Where a session's subscriptions came from, for the status line and brain
 * status: its environment, read against the settings files its client merges
 * into it (its profile's; Claude Code's `.claude/settings.local.json`,
 * `.claude/settings.json`, `~/.claude/settings.json`) and the bus folder's
 * `.env`. Hooks never call this: they need the value, not its origin, and read
 * the environment alone.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { busDotEnv, dotEnvPath } from '../adapters/dot-env.js';
import type { Env } from '../model/settings.js';
import { subscriptionSource, type SettingsFileLayer, type SubscriptionSource } from '../core/subscriptions.js';
import type { ClientProfile, SettingsFiles } from './profile.js';

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

/** A client's settings files for a repo, highest precedence first, each with its `env` block (no repo: the user's alone). */
export function settingsLayers(settings: SettingsFiles, repo: string | null, home: string): SettingsFileLayer[] {
  const layers: SettingsFileLayer[] = [];
  for (const file of settings.files) {
    const base = file.under === 'repo' ? repo : home === '' ? null : home;
    if (base === null) continue;
    layers.push({ layer: file.layer, where: file.under === 'repo' ? file.path : `~/${file.path}`, env: envBlock(join(base, file.path)) });
  }
  return layers;
}

/**
 * Which layer set this session's subscriptions. `client`: whose settings files apply (the session's
 * client, or the one that started this shell), if any; `repo`: the repo whose files they are.
 */
export function sessionSubscriptionSource(env: Env, client: ClientProfile | null, repo: string | null): SubscriptionSource {
  const files = client?.settings ? settingsLayers(client.settings, repo, env.HOME || homedir()) : [];
  return subscriptionSource(env, files, busDotEnv(env), dotEnvPath(env));
}
