/** The brain's channel, state and markers on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { BrainState } from '../../model/records.js';
import type { BrainPort } from '../ports/brain.js';
import { BRAIN_FIELDS, columnList, selectList, valuesList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';
import { channelNotices, deleteNotice, insertNotice } from './notices.js';

const BRAIN_COLUMNS = lazy(() => selectList(BRAIN_FIELDS));

function writeBrainState(db: SqliteConnection, state: BrainState): void {
  db.run(
    `INSERT INTO brain_state (${columnList(BRAIN_FIELDS)}) VALUES (${valuesList(BRAIN_FIELDS, (field) => `@${field}`)})
     ON CONFLICT(channel) DO UPDATE SET source_kind = excluded.source_kind, location = excluded.location,
       content_hash = excluded.content_hash, entry_count = excluded.entry_count, cut_by_cap = excluded.cut_by_cap,
       warnings = excluded.warnings, last_fetch_at = excluded.last_fetch_at, last_ok_at = excluded.last_ok_at,
       last_error = excluded.last_error`,
    { ...state },
  );
}

export function sqliteBrain(db: SqliteConnection): BrainPort {
  return {
    async reconcileChannel(input) {
      return db.immediate(() => {
        const plan = input.plan(channelNotices(db, input.channel));
        for (const { noticeId, priority } of plan.reprioritize) db.run('UPDATE notices SET priority = ? WHERE notice_id = ?', [priority, noticeId]);
        for (const notice of plan.added) insertNotice(db, notice);
        for (const notice of plan.removed) deleteNotice(db, notice.noticeId);
        writeBrainState(db, input.state);
        return { kept: plan.kept, added: plan.added, removed: plan.removed };
      });
    },

    async recordBrainState(state) {
      db.immediate(() => writeBrainState(db, state));
    },

    async brainState(channel) {
      return db.get<BrainState>(`SELECT ${BRAIN_COLUMNS()} FROM brain_state WHERE channel = ?`, [channel]) ?? null;
    },

    async recordMarker(key, session, now) {
      return db.immediate(() => db.run('INSERT OR IGNORE INTO brain_markers (marker_key, session, taken_at) VALUES (?, ?, ?)', [key, session, now]).changes > 0);
    },
  };
}
