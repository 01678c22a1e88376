/** `brain status`: what the adapter is set to and what its last fetch found, from the store (no fetch). */
import type { Bus } from '../core/bus.js';
import { receives, type SubscriptionLayer, type SubscriptionSource } from '../core/subscriptions.js';
import type { BrainSettings } from './settings.js';
import { quoted } from '../model/quote.js';

export interface BrainStatus {
  enabled: boolean;
  enabled_because: string;
  source_type: 'http' | 'file';
  source_location: string;
  channel: string;
  entry_count: number;
  live_notices: number;
  content_hash: string | null;
  refresh_every_tool_calls: number;
  last_fetch_at: string | null;
  last_ok_at: string | null;
  last_error: string | null;
  /** This session's subscriptions; null where they cannot be known (a server its client tells nothing). */
  subscriptions: string[] | null;
  /** Which layer set them (launch, repo-local, repo, user, none) and where, in words. */
  subscriptions_layer: SubscriptionLayer | null;
  subscriptions_from: string | null;
  warnings: string[];
}

export async function brainStatus(bus: Bus, settings: BrainSettings, subscriptions: SubscriptionSource | null): Promise<BrainStatus> {
  const state = await bus.brain.state(settings.channel);
  const live = (await bus.notices.channels()).find((row) => row.channel === settings.channel)?.total ?? 0;
  const location = settings.source.kind === 'http' ? `${settings.source.url}/feed` : settings.source.path;
  const warnings: string[] = [];
  if (!settings.enabled) warnings.push(`the brain is off (${settings.enabledBecause}); set BRAIN_ENABLED=1 to turn it on`);
  if (subscriptions !== null && subscriptions.layer !== 'none' && !receives(subscriptions.subscriptions, settings.channel)) {
    const channels = subscriptions.subscriptions.channels.length === 0 ? 'global notices only' : subscriptions.subscriptions.channels.join(',');
    warnings.push(`BRAIN_CHANNEL ${quoted(settings.channel)} is not in this session's subscriptions (${channels}, from ${subscriptions.where}): it will not see the brain`);
  }
  if (subscriptions !== null) warnings.push(...subscriptions.warnings);
  if (state === null) warnings.push('the source has not been read yet: run brain refresh');
  if (state?.lastError) warnings.push(`the source is unreachable (${state.lastError}); the channel keeps its last good content`);
  if (state && state.cutByCap > 0) warnings.push(`${state.cutByCap} entries were cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES)`);
  if (state) {
    for (const warning of JSON.parse(state.warnings) as string[]) if (!warning.includes('cut by the channel cap')) warnings.push(warning);
  }
  return {
    enabled: settings.enabled,
    enabled_because: settings.enabledBecause,
    source_type: settings.source.kind,
    source_location: location,
    channel: settings.channel,
    entry_count: state?.entryCount ?? 0,
    live_notices: live,
    content_hash: state?.contentHash ?? null,
    refresh_every_tool_calls: settings.refreshToolCalls,
    last_fetch_at: state?.lastFetchAt ?? null,
    last_ok_at: state?.lastOkAt ?? null,
    last_error: state?.lastError ?? null,
    subscriptions: subscriptions?.subscriptions.channels ?? null,
    subscriptions_layer: subscriptions?.layer ?? null,
    subscriptions_from: subscriptions?.where ?? null,
    warnings,
  };
}
