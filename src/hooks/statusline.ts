/**
 * `agent-bus statusline`: one line for Claude Code's status bar. Claude Code
 * runs it often, so it reads and never writes: who this session is, what it
 * subscribes to, its unread mail and the live notices it receives.
 */
import { repoRoot, resolveIdentity, sessionsEnabled } from '../core/identity.js';
import { layerLabel, subscriptionLabel, type SubscriptionLayer } from '../core/subscriptions.js';
import { receivedCounts } from '../core/notice-ops.js';
import { settingsProject } from '../clients/profile.js';
import { profileFor } from '../clients/profiles.js';
import { sessionSubscriptionSource } from '../clients/subscription-source.js';
import type { Env } from '../core/settings.js';
import { openBusHere } from '../runtime.js';
import { systemProcessTable } from '../sessions/procs.js';
import { payloadDirectory, hookSessionKey, payloadTimeoutMs, readPayload } from './payload.js';
import { hookReader } from './scope.js';
import { hubAccess } from '../remote/settings.js';
import { callHubOp } from '../remote/tools.js';

export interface StatusFacts {
  name: string | null;
  channels: string[];
  /** Which layer set the subscriptions: launch, repo-local, repo, user or none. */
  channels_layer: SubscriptionLayer;
  /** Where, in words: a settings file, the launch environment, the bus's .env. */
  channels_from: string;
  pending_mail: number;
  notices: { critical: number; alert: number; info: number };
}

export async function statusFacts(env: Env, cwd: string, client: string): Promise<StatusFacts> {
  const payload = await readPayload(payloadTimeoutMs(env));
  // A client with settings files names the project whose files it merged; otherwise the repo the session is in.
  const profile = profileFor(client);
  const project = settingsProject(profile, env) ?? repoRoot(payloadDirectory(payload) ?? cwd);
  const source = sessionSubscriptionSource(env, profile, project);
  const subscriptions = source.subscriptions;
  const channels = { channels: subscriptions.channels, channels_layer: source.layer, channels_from: source.where };
  const sessionKey = hookSessionKey(payload, env);
  const access = hubAccess(env);
  if (access !== null) {
    const counts = await callHubOp<Pick<StatusFacts, 'name' | 'pending_mail' | 'notices'>>(access, 'status.counts', { subscriptions, session_key: sessionKey });
    return { ...counts, ...channels };
  }
  // Asked above whether a hub is set: this is this machine's bus.
  const bus = openBusHere(env);
  try {
    const notices = receivedCounts(await bus.notices.channels(), subscriptions);
    const identity = await resolveIdentity({ env, client, payloadDir: payloadDirectory(payload), cwd }, bus, 'hook').catch(() => null);
    if (identity === null || identity.kind !== 'agent') return { name: null, ...channels, pending_mail: 0, notices };
    const reader = await hookReader(bus, identity.name, sessionKey, systemProcessTable(env), sessionsEnabled(env));
    return { name: reader, ...channels, pending_mail: await bus.pendingCount(reader), notices };
  } finally {
    await bus.close();
  }
}

export function statusText(facts: StatusFacts): string {
  const parts = [`bus ${facts.name ?? '(not on the bus)'}`, `ch ${subscriptionLabel({ channels: facts.channels, all: false })}${facts.channels_layer === 'none' ? '' : ` (${layerLabel(facts.channels_layer)})`}`, `mail ${facts.pending_mail}`];
  const live = (['critical', 'alert', 'info'] as const).filter((severity) => facts.notices[severity] > 0).map((severity) => `${facts.notices[severity]} ${severity}`);
  parts.push(live.length > 0 ? `notices ${live.join(', ')}` : 'no notices');
  return parts.join(' · ');
}
