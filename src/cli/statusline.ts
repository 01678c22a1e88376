/**
 * `agent-bus statusline`: one line for Claude Code's status bar. Claude Code
 * runs it often, so it reads and never writes: who this session is, where its
 * turn stands and the task in hand, what it subscribes to, its unread mail and
 * the live notices it receives.
 */
import { repoRoot } from '../adapters/identity.js';
import { layerLabel, subscriptionLabel, type SubscriptionLayer } from '../core/subscriptions.js';
import { settingsProject } from '../clients/profile.js';
import { profileFor } from '../clients/registry/profiles.js';
import { sessionSubscriptionSource } from '../clients/subscription-source.js';
import type { Env } from '../model/settings.js';
import { standingText } from '../render/presence.js';
import type { BusClient, SessionCounts } from '../client/bus-client.js';
import { payloadDirectory, hookSessionKey, payloadTimeoutMs, readPayload } from '../hooks/payload.js';

/** The session's status (its name, mail, notices, presence and task: SessionCounts), and where its subscriptions come from. */
export interface StatusFacts extends SessionCounts {
  channels: string[];
  /** Which layer set the subscriptions: launch, repo-local, repo, user or none. */
  channels_layer: SubscriptionLayer;
  /** Where, in words: a settings file, the launch environment, the bus's .env. */
  channels_from: string;
}

export async function statusFacts(client: BusClient, env: Env, cwd: string, clientId: string): Promise<StatusFacts> {
  const payload = await readPayload(payloadTimeoutMs(env));
  // A client with settings files names the project whose files it merged; otherwise the repo the session is in.
  const profile = profileFor(clientId);
  const project = settingsProject(profile, env) ?? repoRoot(payloadDirectory(payload) ?? cwd);
  const source = sessionSubscriptionSource(env, profile, project);
  const counts = await client.sessionCounts({
    subscriptions: source.subscriptions,
    sessionKey: hookSessionKey(payload, env),
    client: clientId,
    payloadDir: payloadDirectory(payload) ?? null,
    cwd,
  });
  const { name, ...rest } = counts;
  return { name, channels: source.subscriptions.channels, channels_layer: source.layer, channels_from: source.where, ...rest };
}

export function statusText(facts: StatusFacts, now = Date.now()): string {
  const standing = facts.name === null ? '' : standingText(facts, now, ' · ');
  const parts = [`bus ${facts.name ?? '(not on the bus)'}`, ...(standing === '' ? [] : [standing]), `ch ${subscriptionLabel({ channels: facts.channels, all: false })}${facts.channels_layer === 'none' ? '' : ` (${layerLabel(facts.channels_layer)})`}`, `mail ${facts.pending_mail}`];
  const live = (['critical', 'alert', 'info'] as const).filter((severity) => facts.notices[severity] > 0).map((severity) => `${facts.notices[severity]} ${severity}`);
  parts.push(live.length > 0 ? `notices ${live.join(', ')}` : 'no notices');
  return parts.join(' · ');
}
