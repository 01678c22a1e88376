/**
 * A session's subscriptions: the notice channels it receives, and which layer
 * set them. Four layers, lowest to highest:
 *
 * 1. the user's default: `AGENT_BUS_DEFAULT_CHANNELS` in the bus folder's
 *    `.env` (every client), or Claude Code's `~/.claude/settings.json` `env`;
 * 2. the repo's default, which init writes as `AGENT_BUS_DEFAULT_CHANNELS`
 *    (Claude Code's `.claude/settings.json` `env`, the Codex hook commands,
 *    the opencode plugin, the agy hook command);
 * 3. the repo's private override: `.claude/settings.local.json` `env`;
 * 4. the environment the client was launched with: `AGENT_BUS_CHANNELS`
 *    (or `AGENTIHOOKS_BASE_CHANNELS`), which wins over everything.
 *
 * The settings layers carry a variable of their own because Claude Code
 * applies a settings file's `env` over the environment it was started with,
 * and init's hook commands set theirs in front of the command: were they to
 * set `AGENT_BUS_CHANNELS`, no launch value could ever win.
 */
import { setting, type Env } from '../model/settings.js';

/** What init subscribes a repo's sessions to: the spec's default profile. Users edit it per repo. */
export const DEFAULT_SUBSCRIPTIONS = 'brain,amygdala';

/** Set at launch; they win over every settings layer. */
export const LAUNCH_VARIABLES = ['AGENT_BUS_CHANNELS', 'AGENTIHOOKS_BASE_CHANNELS'] as const;
/** Set by the settings layers (and by init): the subscriptions a session gets unless launched with others. */
export const DEFAULT_VARIABLE = 'AGENT_BUS_DEFAULT_CHANNELS';
/** Every variable that names subscriptions, highest precedence first. */
export const SUBSCRIPTION_VARIABLES = [...LAUNCH_VARIABLES, DEFAULT_VARIABLE] as const;

export interface Subscriptions {
  /** The channels named, trimmed and de-duplicated, in the order given. */
  channels: string[];
  /** `*` was among them: every channel. */
  all: boolean;
}

/** The variable of `env` that sets the subscriptions, and its value; null when none is set. */
export function subscriptionSetting(env: Env): { variable: string; value: string } | null {
  for (const variable of SUBSCRIPTION_VARIABLES) {
    const value = setting(env, variable);
    if (value !== undefined) return { variable, value };
  }
  return null;
}

/** A comma-separated channel list: trimmed, de-duplicated, `*` for every channel, empty for global notices only. */
export function parseChannelList(raw: string): Subscriptions {
  const channels: string[] = [];
  for (const part of raw.split(',')) {
    const name = part.trim();
    if (name !== '' && !channels.includes(name)) channels.push(name);
  }
  return { channels, all: channels.includes('*') };
}

/**
 * The session's subscriptions: the highest variable its environment sets,
 * else the user's default (the bus folder's `.env`, read only when asked for).
 * Unset everywhere means global notices only.
 */
export function parseSubscriptions(env: Env, userDefaults: () => Env = () => ({})): Subscriptions {
  const setting = subscriptionSetting(env) ?? subscriptionSetting(userDefaults());
  return parseChannelList(setting?.value ?? '');
}

export function subscriptionLabel(subscriptions: Subscriptions): string {
  return subscriptions.channels.length === 0 ? '(global only)' : subscriptions.channels.join(',');
}

/** Whether a session with these subscriptions receives a notice on `channel`. */
export function receives(subscriptions: Subscriptions, channel: string | null): boolean {
  return channel === null || subscriptions.all || subscriptions.channels.includes(channel);
}

export type SubscriptionLayer = 'launch' | 'repo-local' | 'repo' | 'user' | 'none';

/** One settings file a client merges into the environment it gives its hooks (Claude Code's three). */
export interface SettingsFileLayer {
  layer: 'repo-local' | 'repo' | 'user';
  /** The file, as shown to the user. */
  where: string;
  /** The file's `env` block (empty when the file is missing or unreadable). */
  env: Record<string, unknown>;
}

export interface SubscriptionSource {
  subscriptions: Subscriptions;
  layer: SubscriptionLayer;
  /** Where the value was set, in words: a file, the launch environment, the repo's wiring. */
  where: string;
  /** The variable that set it; null when nothing did. */
  variable: string | null;
  /** Settings that keep the layers from holding (a launch variable written into a settings file). */
  warnings: string[];
}

/**
 * Which layer set the subscriptions in `env`. A value that a settings file's
 * `env` holds came from that file (the highest such file: Claude Code merges
 * them in this order); a launch variable no file holds came from the launch;
 * the default variable no file holds came from the repo's wiring (init's hook
 * commands and plugin set it). `files` are ordered highest first. An
 * environment that names no subscriptions (a process the client did not
 * give its settings) is read as the client would have set it from the files.
 */
export function subscriptionSource(env: Env, files: SettingsFileLayer[], userDefaults: Env, userDefaultsWhere: string): SubscriptionSource {
  const warnings: string[] = [];
  for (const file of files) {
    for (const variable of LAUNCH_VARIABLES) {
      if (typeof file.env[variable] === 'string') {
        warnings.push(`${file.where} sets ${variable} in its env, which Claude Code applies over the launch environment, so no launch value can win; name it ${DEFAULT_VARIABLE} there`);
      }
    }
  }
  const merged: Env = {};
  for (const file of [...files].reverse()) {
    for (const [key, value] of Object.entries(file.env)) if (typeof value === 'string') merged[key] = value;
  }
  const setting = subscriptionSetting(env) ?? subscriptionSetting(merged);
  if (setting !== null) {
    const subscriptions = parseChannelList(setting.value);
    const file = files.find((candidate) => candidate.env[setting.variable] === setting.value);
    if (file) return { subscriptions, layer: file.layer, where: file.where, variable: setting.variable, warnings };
    const launched = (LAUNCH_VARIABLES as readonly string[]).includes(setting.variable);
    return {
      subscriptions,
      layer: launched ? 'launch' : 'repo',
      where: launched ? 'the launch environment' : "the repo's wiring",
      variable: setting.variable,
      warnings,
    };
  }
  const fallback = subscriptionSetting(userDefaults);
  if (fallback !== null) return { subscriptions: parseChannelList(fallback.value), layer: 'user', where: userDefaultsWhere, variable: fallback.variable, warnings };
  return { subscriptions: { channels: [], all: false }, layer: 'none', where: 'nothing sets them', variable: null, warnings };
}

/** The layer as the status line names it: short. */
export function layerLabel(layer: Exclude<SubscriptionLayer, 'none'>): string {
  return { launch: 'launch', 'repo-local': 'local', repo: 'repo', user: 'user' }[layer];
}
