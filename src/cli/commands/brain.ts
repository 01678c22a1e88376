/** `agent-bus brain refresh|status`: read the brain's source now, or say how it stands. */
import { openClient } from '../../connect.js';
import { brainSettings } from '../../brain/settings.js';
import type { BrainStatus } from '../../brain/status.js';
import type { RefreshResult } from '../../brain/refresh.js';
import { parseChannel } from '../../core/notices.js';
import { subscriptionLabel } from '../../core/subscriptions.js';
import { settingsProject } from '../../clients/profile.js';
import { clientInEnvironment } from '../../clients/registry/profiles.js';
import { sessionSubscriptionSource } from '../../clients/subscription-source.js';
import { repoRoot } from '../../adapters/identity.js';
import { BusError } from '../../model/errors.js';
import { UsageError } from '../args.js';
import { printable } from '../../render/format.js';
import { when } from '../../model/when.js';
import type { CommandIo, CommandRunner } from '../spec.js';
import { readStdin } from '../context.js';
import { parsePayload } from '../../hooks/payload.js';
import { quoted } from '../../model/quote.js';

function statusText(status: BrainStatus): string {
  const lines = [
    `brain      ${status.enabled ? 'on' : 'off'} (${printable(status.enabled_because)})`,
    `source     ${status.source_type} ${printable(status.source_location)}`,
    `channel    ${printable(status.channel)}: ${count(status.entry_count, 'entry', 'entries')}, ${count(status.live_notices, 'live notice', 'live notices')}`,
    `hash       ${status.content_hash ?? '(none)'}`,
    `refresh    every ${status.refresh_every_tool_calls === 1 ? 'tool call' : `${status.refresh_every_tool_calls} tool calls`}, and when a session starts`,
    `last fetch ${when(status.last_fetch_at)}${status.last_error ? ` (failed: ${printable(status.last_error)})` : ''}`,
  ];
  if (status.subscriptions !== null) {
    lines.push(`subscribed ${printable(subscriptionLabel({ channels: status.subscriptions, all: false }))}, from ${printable(status.subscriptions_from ?? '')}`);
  }
  for (const warning of status.warnings) lines.push(`warning    ${printable(warning)}`);
  return `${lines.join('\n')}\n`;
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function parseChannelSetting(channel: string): void {
  try {
    parseChannel(channel);
  } catch (error) {
    // A setting that cannot be used is this machine's configuration failing, not bad usage: exit 1.
    throw new BusError(`BRAIN_CHANNEL: ${(error as Error).message}`);
  }
}

/** A refresh's outcome: on stdout what it did, or (when the source failed) on stderr why not, as one line; the exit code. */
function writeRefresh(io: CommandIo, json: boolean, result: RefreshResult, channel: string): number {
  if (json) io.stdout.write(`${JSON.stringify({ channel, ...result })}\n`);
  if (!result.ok) {
    io.stderr.write(`agent-bus: brain refresh: the source is unavailable (${printable(result.error ?? '')}); ${quoted(channel)} keeps its last good content\n`);
    return 1;
  }
  if (!json) io.stdout.write(refreshText(result, channel));
  return 0;
}

function refreshText(result: RefreshResult, channel: string): string {
  const lines = [`${quoted(channel)} now holds ${count(result.entries, 'entry', 'entries')}: ${result.kept} unchanged, ${result.added.length} published, ${result.removed} removed`];
  for (const warning of result.warnings) lines.push(`warning: ${printable(warning)}`);
  return `${lines.join('\n')}\n`;
}

export const run: CommandRunner = async (args, io) => {
  const [action, ...rest] = args.positionals;
  if (action !== 'refresh' && action !== 'status' && action !== 'markers') {
    throw new UsageError(`brain: expected refresh, status or markers, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus brain --help'.`);
  }
  if (rest.length > 0) throw new UsageError(`brain ${action}: unexpected argument ${quoted(rest[0])}`);
  const settings = brainSettings(io.env);
  // A setting that is no channel name is said as what it is, before anything is opened or read.
  if (action === 'refresh') parseChannelSetting(settings.channel);
  // Over a hub the brain is the hub's: its source, its settings, its channel (and its writer).
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    if (action === 'markers') {
      const result = await client.brain.writeMarkers(async () => parsePayload(await readStdin(io.stdin(), 'brain markers: the Stop hook payload')));
      io.stdout.write(args.values.json ? `${JSON.stringify(result)}\n` : `${result.markers} marker(s): ${result.sent} sent, ${result.queued} queued in the outbox, ${result.skipped} sent before; ${result.drained} sent from the outbox\n`);
      return 0;
    }
    if (action === 'status') {
      // A client's settings files count only where that client ran this command (from a session's shell or hook).
      const running = clientInEnvironment(io.env);
      const project = (running && settingsProject(running, io.env)) ?? repoRoot(io.cwd);
      const status = await client.brain.status(sessionSubscriptionSource(io.env, running, project));
      io.stdout.write(args.values.json ? `${JSON.stringify(status)}\n` : statusText(status));
      return 0;
    }
    // An explicit refresh runs even with the brain off: it is how a user tries a source out.
    const { channel, ...result } = await client.brain.refresh();
    return writeRefresh(io, args.values.json === true, result, channel);
  } finally {
    await client.close();
  }
};
