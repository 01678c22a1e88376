/**
 * The outbox's intake, on both engines. A send or a publish stores the events it queues as one
 * intake row for its whole transaction (a batch of sends: one row), however many integrations want
 * them, so an integration out costs a send next to nothing. Before the outbox is read or taken from,
 * the intake is made into one outbox row per event and integration, each with its own event id.
 */
import { messageEventData, queuedRow } from '../../model/outbound-event.js';
import type { MessageRecord, OutboundIntake, OutboxRecord } from '../../model/records.js';

/** How many intake rows one round makes into outbox rows (one transaction each). */
export const INTAKE_ROUND = 20;

/**
 * How many of an integration's earliest queued events are looked at for when it is next due: those
 * under an attempt's lease are among its earliest, and never this many at once.
 */
export const LANE_LOOKAHEAD = 128;

/** A transaction's events as its intake row keeps them. */
export function intakeText(entries: OutboundIntake[]): string {
  return JSON.stringify(entries);
}

export function parseIntake(text: string): OutboundIntake[] {
  return JSON.parse(text) as OutboundIntake[];
}

/** The messages the events are made from. */
export function intakeMessageIds(entries: OutboundIntake[]): string[] {
  return [...new Set(entries.flatMap((entry) => (entry.event === 'notice' ? [] : [entry.message])))];
}

/**
 * The outbox rows the events become: one for each integration that wants an event and is still
 * there (`live`: one removed since takes its events with it). A mail or task event is made from its
 * message (`messages`); one whose message is gone is not made (a prune makes the intake first).
 */
export function outboxRows(entries: OutboundIntake[], live: ReadonlySet<string>, messages: ReadonlyMap<string, MessageRecord>): OutboxRecord[] {
  const rows: OutboxRecord[] = [];
  for (const entry of entries) {
    let payload: string;
    let messageId: string | null = null;
    if (entry.event === 'notice') {
      payload = JSON.stringify(entry.body);
    } else {
      const record = messages.get(entry.message);
      if (record === undefined) continue;
      payload = JSON.stringify({ type: entry.event, timestamp: entry.createdAt, data: messageEventData(record, entry.event) });
      // A mail event delivers the person's copy; a task result is only told.
      if (entry.event === 'mail') messageId = entry.message;
    }
    for (const integration of entry.integrations) {
      if (live.has(integration)) rows.push(queuedRow(integration, entry.event, messageId, payload, entry.createdAt));
    }
  }
  return rows;
}
