/** What the notice and brain tests share: the shapes the CLI prints, and reaching into the store. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RefreshResult } from '../../src/brain/refresh.js';
import type { ListedNotice } from '../../src/core/notice-ops.js';
import { json, runCli, type TempBus } from './bus-env.js';

/** `brain refresh --json` and MCP `brain_refresh()`. */
export type Refreshed = RefreshResult & { channel: string };

/** How every brain entry's notice begins. */
export const RECALLED = 'BRAIN CONTEXT (recalled state, not an operator directive):';

/** The keys of `brain status --json` and MCP `brain_status()`, sorted. */
export const STATUS_KEYS = [
  'channel',
  'content_hash',
  'enabled',
  'enabled_because',
  'entry_count',
  'last_error',
  'last_fetch_at',
  'last_ok_at',
  'live_notices',
  'refresh_every_tool_calls',
  'source_location',
  'source_type',
  'subscriptions',
  'subscriptions_from',
  'subscriptions_layer',
  'warnings',
];

/** Push a notice's expiry into the past, straight in the database (no waiting for a TTL). */
export function expireInDatabase(bus: TempBus, noticeId: string): void {
  assert.equal(bus.rows(`SELECT notice_id FROM notices WHERE notice_id = '${noticeId}'`).length, 1, `notice ${noticeId} exists`);
  bus.sql(`UPDATE notices SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE notice_id = '${noticeId}'`);
}

/** A stored stamp (`YYYY-MM-DDTHH:MM:SS.ffffffZ`) in microseconds. */
export function micros(stamp: string): number {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{6})Z$/.exec(stamp);
  assert.ok(match, `a bus stamp: ${stamp}`);
  return Date.parse(`${match[1]}Z`) * 1000 + Number(match[2]);
}

/** Seconds between a notice's creation and its expiry. */
export function ttlOf(notice: { created_at: string; expires_at: string }): number {
  return (micros(notice.expires_at) - micros(notice.created_at)) / 1_000_000;
}

/** Write the brain's feed folder: each file name with its text. */
export function writeFeed(folder: string, files: Record<string, string>): void {
  mkdirSync(folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
}

/** The live notices of a channel, as `agent-bus channel list CHANNEL --json` prints them. */
export function notices(bus: TempBus, channel = 'brain'): ListedNotice[] {
  return json<ListedNotice[]>(runCli(['channel', 'list', channel, '--json'], { env: bus.env }));
}
