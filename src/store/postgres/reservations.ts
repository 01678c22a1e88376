/** File reservations and edits on PostgreSQL: a repo's requests serialized by an advisory lock on it, a file's edits by one on the file. */
import type { ReservationRecord } from '../../model/records.js';
import { UNMATCHED_GLOB_CHARS, type Collision, type ReservationsPort } from '../ports/reservations.js';
import { columnList, RESERVATION_FIELDS, RESERVATION_INSERT_FIELDS, reservationOf, reservationValues, selectList, valuesList } from '../shared/columns.js';
import { anchorsAbove } from '../../model/reservation-anchor.js';
import { LOCK, type PostgresPool, type Query } from './pool.js';

const COLUMNS = selectList(RESERVATION_FIELDS);
const INSERT_FIELDS = Object.keys(RESERVATION_INSERT_FIELDS);
type Row = Parameters<typeof reservationOf>[0];

async function endNow(query: Query, repo: string | null, now: string, gone: string[]): Promise<ReservationRecord[]> {
  const result = await query(
    `DELETE FROM reservations WHERE ($1::text IS NULL OR repo = $1) AND (expires_at <= $2 OR reservation_id = ANY($3::text[])) RETURNING ${COLUMNS}`,
    [repo, now, gone],
  );
  return (result.rows as Row[]).map(reservationOf).sort(byAge);
}

function byAge(a: ReservationRecord, b: ReservationRecord): number {
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.reservationId < b.reservationId ? -1 : a.reservationId > b.reservationId ? 1 : 0;
}

/**
 * Whether a reservation may cover one of `$3` (a text[]): the pattern as a LIKE pattern (`%` and `_`
 * escaped, `**\/` and `*` made `%`, `?` made `_`) matches at least what it does; a file below a matched
 * folder, and a folder a `dir/**` names, count too. A pattern LIKE cannot stand in for is always kept.
 */
const POSTGRES_LIKE = "replace(replace(replace(replace(replace(pattern, '%', '\\%'), '_', '\\_'), '**/', '%'), '*', '%'), '?', '_')";
const MAY_COVER_POSTGRES = [
  ...UNMATCHED_GLOB_CHARS.map((char) => `strpos(pattern, '${char}') > 0`),
  `EXISTS (SELECT 1 FROM unnest($3::text[]) AS f(value) WHERE f.value LIKE ${POSTGRES_LIKE} OR (f.value || '/') LIKE ${POSTGRES_LIKE} OR f.value LIKE (${POSTGRES_LIKE} || '/%'))`,
].join(' OR ');

export function postgresReservations(pool: PostgresPool): ReservationsPort {
  return {
    async reserve(input) {
      return pool.transaction([[LOCK.reservations, input.repo]], async (query) => {
        const current = await query(`SELECT ${COLUMNS} FROM reservations WHERE repo = $1 AND expires_at > $2 ORDER BY created_at, reservation_id`, [input.repo, input.now]);
        const decision = input.decide((current.rows as Row[]).map(reservationOf));
        if (decision.refused !== null) return { decision, ended: [] };
        const ended = await endNow(query, input.repo, input.now, decision.drop);
        for (const renewal of decision.renew) await query('UPDATE reservations SET expires_at = $2 WHERE reservation_id = $1', [renewal.reservationId, renewal.expiresAt]);
        for (const row of decision.grant) {
          const values = reservationValues(row);
          await query(
            `INSERT INTO reservations (${columnList(RESERVATION_INSERT_FIELDS)}) VALUES (${valuesList(RESERVATION_INSERT_FIELDS, (_, index) => `$${index + 1}`)})`,
            INSERT_FIELDS.map((field) => values[field]),
          );
        }
        return { decision, ended };
      });
    },

    async releaseReservations({ repo, holder, patterns }) {
      return pool.transaction(repo === null ? [] : [[LOCK.reservations, repo]], async (query) => {
        const result = await query(
          `DELETE FROM reservations WHERE ($1::text IS NULL OR repo = $1) AND ($2::text IS NULL OR holder = $2) AND ($3::text[] IS NULL OR pattern = ANY($3::text[])) RETURNING ${COLUMNS}`,
          [repo, holder, patterns],
        );
        return (result.rows as Row[]).map(reservationOf).sort(byAge);
      });
    },

    async reservationsAt(repo, now) {
      const rows = await pool.read<Row>(
        `SELECT ${COLUMNS} FROM reservations WHERE ($1::text IS NULL OR repo = $1) AND expires_at > $2 ORDER BY created_at, reservation_id`,
        [repo, now],
      );
      return rows.map(reservationOf);
    },

    async reservationsCovering({ repo, now, files, foldCase }) {
      // LIKE folds no case: a folding file system reads them all.
      if (foldCase) return (await pool.read<Row>(`SELECT ${COLUMNS} FROM reservations WHERE repo = $1 AND expires_at > $2 ORDER BY created_at, reservation_id`, [repo, now])).map(reservationOf);
      // Only those anchored at a file or above it (through the anchor's index), and those an older agent-bus wrote without one.
      const anchors = [...new Set(files.flatMap(anchorsAbove))];
      const rows = await pool.read<Row>(
        `SELECT ${COLUMNS} FROM reservations WHERE repo = $1 AND (anchor = ANY($4::text[]) OR anchor IS NULL) AND expires_at > $2 AND (${MAY_COVER_POSTGRES}) ORDER BY created_at, reservation_id`,
        [repo, now, files, anchors],
      );
      return rows.map(reservationOf);
    },

    async endReservations(now, gone) {
      // Asked at every listing (a dashboard's included): with nothing to end, no write and no NOTIFY wakes the bus's watchers.
      const due = await pool.read('SELECT 1 FROM reservations WHERE expires_at <= $1 OR reservation_id = ANY($2::text[]) LIMIT 1', [now, gone]);
      if (due.length === 0) return [];
      return pool.transaction([], (query) => endNow(query, null, now, gone));
    },

    async recordEdit({ edit, since }) {
      return pool.transaction([[LOCK.edits, `${edit.repo}\n${edit.path}`]], async (query) => {
        const others = (
          await query('SELECT agent, at FROM edits WHERE repo = $1 AND path = $2 AND agent <> $3 AND at >= $4 ORDER BY at, agent', [edit.repo, edit.path, edit.agent, since])
        ).rows as Array<{ agent: string; at: string }>;
        await query('INSERT INTO edits (repo, path, agent, at) VALUES ($1, $2, $3, $4) ON CONFLICT (repo, path, agent) DO UPDATE SET at = excluded.at', [
          edit.repo,
          edit.path,
          edit.agent,
          edit.at,
        ]);
        const collisions: Collision[] = [];
        for (const other of others) {
          const [first, second] = [other.agent, edit.agent].sort() as [string, string];
          const alerted = await query('SELECT 1 FROM collisions WHERE repo = $1 AND path = $2 AND first_agent = $3 AND second_agent = $4 AND at >= $5', [edit.repo, edit.path, first, second, since]);
          if (alerted.rowCount !== null && alerted.rowCount > 0) continue;
          await query(
            'INSERT INTO collisions (repo, path, first_agent, second_agent, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (repo, path, first_agent, second_agent) DO UPDATE SET at = excluded.at',
            [edit.repo, edit.path, first, second, edit.at],
          );
          collisions.push({ repo: edit.repo, path: edit.path, other: other.agent, otherAt: other.at });
        }
        return collisions;
      });
    },

    async pruneEdits(before) {
      return pool.transaction([], async (query) => {
        const edits = await query('DELETE FROM edits WHERE at < $1', [before]);
        const collisions = await query('DELETE FROM collisions WHERE at < $1', [before]);
        return (edits.rowCount ?? 0) + (collisions.rowCount ?? 0);
      });
    },
  };
}
