/** What the notice and brain tests share: the shapes the CLI prints, and reaching into the store. */
import assert from 'node:assert/strict';
import type { RefreshResult } from '../../src/brain/refresh.js';
import type { TempBus } from './bus-env.js';

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
