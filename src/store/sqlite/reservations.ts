/** File reservations and edits on SQLite: each request decided and written under the one writer lock. */
import { lazy } from '../shared/lazy.js';
import type { ReservationRecord } from '../../model/records.js';
import { UNMATCHED_GLOB_CHARS, type Collision, type ReservationsPort } from '../ports/reservations.js';
import { columnList, RESERVATION_FIELDS, RESERVATION_INSERT_FIELDS, reservationOf, reservationValues, selectList, valuesList } from '../shared/columns.js';
import { anchorsAbove } from '../../model/reservation-anchor.js';
import type { SqliteConnection } from './driver.js';

const COLUMNS = lazy(() => selectList(RESERVATION_FIELDS));
type Row = Parameters<typeof reservationOf>[0];

/**
 * Whether a reservation may cover one of `@files` (a JSON array): GLOB's `*` and `?` also match `/`, so
 * with `**\/` made `*` it matches at least what the pattern does; a file below a matched folder, and a
 * folder a `dir/**` names, count too. A pattern GLOB cannot stand in for is always kept.
 */
const SQLITE_GLOB = "replace(pattern, '**/', '*')";
const MAY_COVER_SQLITE = [
  ...UNMATCHED_GLOB_CHARS.map((char) => `instr(pattern, '${char}') > 0`),
  `EXISTS (SELECT 1 FROM json_each(@files) AS f WHERE f.value GLOB ${SQLITE_GLOB} OR (f.value || '/') GLOB ${SQLITE_GLOB} OR f.value GLOB (${SQLITE_GLOB} || '/*'))`,
].join(' OR ');

/**
 * Of those, only the rows anchored at one of `@anchors` (a file, or a folder above it) and those an older
 * agent-bus wrote without an anchor: two searches of the anchor's index (an OR of both reads the repo's every row).
 */
const narrowed = (anchor: string): string => `SELECT ${COLUMNS()} FROM reservations WHERE repo = @repo AND ${anchor} AND expires_at > @now AND (${MAY_COVER_SQLITE})`;
const COVERING = lazy(() => `${narrowed('anchor IN (SELECT value FROM json_each(@anchors))')} UNION ALL ${narrowed('anchor IS NULL')} ORDER BY "createdAt", "reservationId"`);

export function sqliteReservations(db: SqliteConnection): ReservationsPort {
  // One statement for a repo and one for all: an `@repo IS NULL OR` would keep SQLite off the repo's index.
  const current = (repo: string | null, now: string): ReservationRecord[] =>
    (repo === null
      ? db.all<Row>(`SELECT ${COLUMNS()} FROM reservations WHERE expires_at > @now ORDER BY created_at, reservation_id`, { now })
      : db.all<Row>(`SELECT ${COLUMNS()} FROM reservations WHERE repo = @repo AND expires_at > @now ORDER BY created_at, reservation_id`, { repo, now })
    ).map(reservationOf);

  const endNow = (repo: string | null, now: string, gone: string[]): ReservationRecord[] => {
    const ended = db
      .all<Row>(`SELECT ${COLUMNS()} FROM reservations WHERE (@repo IS NULL OR repo = @repo) AND expires_at <= @now ORDER BY created_at, reservation_id`, { repo, now })
      .map(reservationOf);
    for (const id of gone) {
      const row = db.get<Row>(`SELECT ${COLUMNS()} FROM reservations WHERE reservation_id = ?`, [id]);
      if (row !== undefined && !ended.some((one) => one.reservationId === id)) ended.push(reservationOf(row));
    }
    for (const row of ended) db.run('DELETE FROM reservations WHERE reservation_id = ?', [row.reservationId]);
    return ended;
  };

  return {
    async reserve(input) {
      return db.immediate(() => {
        const decision = input.decide(current(input.repo, input.now));
        if (decision.refused !== null) return { decision, ended: [] };
        const ended = endNow(input.repo, input.now, decision.drop);
        for (const renewal of decision.renew) db.run('UPDATE reservations SET expires_at = @expiresAt WHERE reservation_id = @reservationId', renewal);
        for (const row of decision.grant) {
          db.run(`INSERT INTO reservations (${columnList(RESERVATION_INSERT_FIELDS)}) VALUES (${valuesList(RESERVATION_INSERT_FIELDS, (field) => `@${field}`)})`, reservationValues(row));
        }
        return { decision, ended };
      });
    },

    async releaseReservations({ repo, holder, patterns }) {
      return db.immediate(() => {
        const rows = db
          .all<Row>(`SELECT ${COLUMNS()} FROM reservations WHERE (@repo IS NULL OR repo = @repo) AND (@holder IS NULL OR holder = @holder) ORDER BY created_at, reservation_id`, { repo, holder })
          .map(reservationOf)
          .filter((row) => patterns === null || patterns.includes(row.pattern));
        for (const row of rows) db.run('DELETE FROM reservations WHERE reservation_id = ?', [row.reservationId]);
        return rows;
      });
    },

    async reservationsAt(repo, now) {
      return current(repo, now);
    },

    async reservationsCovering({ repo, now, files, foldCase }) {
      // GLOB is case-sensitive and knows no folding of other letters: a folding file system reads them all.
      if (foldCase) return current(repo, now);
      return db
        .all<Row>(COVERING(), {
          repo,
          now,
          files: JSON.stringify(files),
          anchors: JSON.stringify([...new Set(files.flatMap(anchorsAbove))]),
        })
        .map(reservationOf);
    },

    async endReservations(now, gone) {
      // Asked at every listing (a dashboard's included): with nothing to end, the writer lock is not taken.
      if (gone.length === 0 && db.get('SELECT 1 FROM reservations WHERE expires_at <= ? LIMIT 1', [now]) === undefined) return [];
      return db.immediate(() => endNow(null, now, gone));
    },

    async recordEdit({ edit, since }) {
      return db.immediate(() => {
        const others = db.all<{ agent: string; at: string }>('SELECT agent, at FROM edits WHERE repo = @repo AND path = @path AND agent <> @agent AND at >= @since ORDER BY at, agent', {
          ...edit,
          since,
        });
        db.run('INSERT INTO edits (repo, path, agent, at) VALUES (@repo, @path, @agent, @at) ON CONFLICT (repo, path, agent) DO UPDATE SET at = excluded.at', { ...edit });
        const collisions: Collision[] = [];
        for (const other of others) {
          const [first, second] = [other.agent, edit.agent].sort() as [string, string];
          const pair = { repo: edit.repo, path: edit.path, first, second, at: edit.at, since };
          const alerted = db.get('SELECT 1 FROM collisions WHERE repo = @repo AND path = @path AND first_agent = @first AND second_agent = @second AND at >= @since', pair);
          if (alerted !== undefined) continue;
          db.run(
            'INSERT INTO collisions (repo, path, first_agent, second_agent, at) VALUES (@repo, @path, @first, @second, @at) ON CONFLICT (repo, path, first_agent, second_agent) DO UPDATE SET at = excluded.at',
            pair,
          );
          collisions.push({ repo: edit.repo, path: edit.path, other: other.agent, otherAt: other.at });
        }
        return collisions;
      });
    },

    async pruneEdits(before) {
      return db.immediate(() => db.run('DELETE FROM edits WHERE at < ?', [before]).changes + db.run('DELETE FROM collisions WHERE at < ?', [before]).changes);
    },
  };
}
