/**
 * After a send commits: wake the recipients that wake.json names. A direct
 * message wakes its addressee; a repo-wide or `*` message at most one agent
 * per repo (the most recently seen one with a command), since whoever wakes
 * first claims it. No agent is woken more than AGENT_BUS_WAKES_PER_HOUR times
 * an hour. Nothing here ever fails or delays a send.
 */
import type { AuditLog } from '../audit/log.js';
import { digestBody, type AuditRow } from '../audit/record.js';
import { formatStamp, nowMicros } from '../core/clock.js';
import { intSetting, type Env } from '../core/settings.js';
import type { MessageRecord, Store } from '../store/types.js';
import { loadWakeConfig, lookupWake, type WakeConfig, type WakeLookup } from './config.js';
import { fireWake } from './fire.js';

export const DEFAULT_WAKES_PER_HOUR = 20;
const HOUR_MICROS = 3_600_000_000;

export type WakeDriver = 'command' | 'watch' | 'push';

export function wakeRow(ts: string, actor: string, message: MessageRecord, to: string, driver: WakeDriver, status: string): AuditRow {
  const digest = digestBody(message.body);
  return {
    ts,
    op: 'wake',
    actor,
    message_id: message.messageId,
    from: message.fromAgent,
    to,
    thread_id: message.threadId,
    body_preview: digest.preview,
    body_sha256: digest.sha256,
    wake_driver: driver,
    wake_status: status,
  };
}

export function wakesPerHour(env: Env): number {
  return intSetting(env, 'AGENT_BUS_WAKES_PER_HOUR', DEFAULT_WAKES_PER_HOUR, 0);
}

/** Who a send wakes: each direct recipient; per repo of a fan-out, the freshest agent with a command. */
async function chooseTargets(store: Store, config: WakeConfig, records: MessageRecord[]): Promise<Array<{ record: MessageRecord; lookup: WakeLookup }>> {
  const targets: Array<{ record: MessageRecord; lookup: WakeLookup }> = [];
  const byRepo = new Map<string, MessageRecord[]>();
  for (const record of records) {
    if (record.fanoutId === null) targets.push({ record, lookup: lookupWake(config, record.toAgent) });
    else byRepo.set(record.toGroup ?? record.toAgent, [...(byRepo.get(record.toGroup ?? record.toAgent) ?? []), record]);
  }
  for (const copies of byRepo.values()) {
    const withCommand: Array<{ record: MessageRecord; lookup: WakeLookup; seen: string }> = [];
    for (const record of copies) {
      const lookup = lookupWake(config, record.toAgent);
      if (lookup.status !== 'command') continue;
      withCommand.push({ record, lookup, seen: (await store.getAgent(record.toAgent))?.lastSeen ?? '' });
    }
    withCommand.sort((a, b) => (a.seen < b.seen ? 1 : a.seen > b.seen ? -1 : 0));
    const chosen = withCommand[0];
    if (chosen) targets.push({ record: chosen.record, lookup: chosen.lookup });
  }
  return targets;
}

export async function wakeRecipients(store: Store, audit: AuditLog, env: Env, actor: string, records: MessageRecord[]): Promise<void> {
  try {
    const config = loadWakeConfig(env);
    // Without a usable wake.json there is nothing to run and nothing to say.
    if (!config.exists || config.problem !== null || records.length === 0) return;
    const limit = wakesPerHour(env);
    const rows: AuditRow[] = [];
    for (const { record, lookup } of await chooseTargets(store, config, records)) {
      const micros = nowMicros();
      const now = formatStamp(micros);
      let status: string;
      if (lookup.status !== 'command') status = lookup.status;
      else if (!(await store.takeWake(record.toAgent, now, formatStamp(micros - HOUR_MICROS), limit))) status = 'rate-limited';
      else status = fireWake(lookup.command, { from: record.fromAgent, to: record.toAgent, threadId: record.threadId, messageId: record.messageId, body: record.body }, env);
      rows.push(wakeRow(now, actor, record, record.toAgent, 'command', status));
    }
    audit.append(rows);
  } catch {
    // A wake is a courtesy: the mail is in the store whatever happens here.
  }
}
