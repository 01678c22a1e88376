/** The brain's channel, state and markers on PostgreSQL: a channel's lock serializes its reconciles. */
import type { BrainState } from '../../model/records.js';
import type { BrainPort } from '../ports/brain.js';
import { BRAIN_FIELDS, columnList, selectList, valuesList } from '../shared/columns.js';
import { LOCK, type PostgresPool, type Query } from './pool.js';
import { channelNotices, deleteNotices, insertNotice } from './notices.js';

const BRAIN_COLUMNS = selectList(BRAIN_FIELDS);

async function writeBrainState(query: Query, state: BrainState): Promise<void> {
  await query(
    `INSERT INTO brain_state (${columnList(BRAIN_FIELDS)}) VALUES (${valuesList(BRAIN_FIELDS, (_, index) => `$${index + 1}`)})
     ON CONFLICT (channel) DO UPDATE SET source_kind = excluded.source_kind, location = excluded.location,
       content_hash = excluded.content_hash, entry_count = excluded.entry_count, cut_by_cap = excluded.cut_by_cap,
       warnings = excluded.warnings, last_fetch_at = excluded.last_fetch_at, last_ok_at = excluded.last_ok_at, last_error = excluded.last_error`,
    Object.keys(BRAIN_FIELDS).map((field) => state[field as keyof BrainState]),
  );
}

export function postgresBrain(pool: PostgresPool): BrainPort {
  return {
    async reconcileChannel(input) {
      return pool.transaction([[LOCK.channel, input.channel]], async (query) => {
        const plan = input.plan(await channelNotices(query, input.channel));
        for (const { noticeId, priority } of plan.reprioritize) await query('UPDATE notices SET priority = $1 WHERE notice_id = $2', [priority, noticeId]);
        for (const notice of plan.added) await insertNotice(query, notice);
        await deleteNotices(query, plan.removed.map((notice) => notice.noticeId));
        await writeBrainState(query, input.state);
        return { kept: plan.kept, added: plan.added, removed: plan.removed };
      });
    },

    async recordBrainState(state) {
      await pool.transaction([[LOCK.channel, state.channel]], (query) => writeBrainState(query, state));
    },

    async brainState(channel) {
      return (await pool.one<BrainState>(`SELECT ${BRAIN_COLUMNS} FROM brain_state WHERE channel = $1`, [channel])) ?? null;
    },

    async recordMarker(key, session, now) {
      return (await pool.writeAlone('INSERT INTO brain_markers (marker_key, session, taken_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [key, session, now], false)) > 0;
    },
  };
}
