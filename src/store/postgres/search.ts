/**
 * Search on PostgreSQL: a GIN-indexed tsvector per message (message_search, keyed by the message's seq),
 * brought up to date at each search and, in a process that lives on, in the background after each batch
 * of sends commits. An advisory lock keeps two processes from tokenizing the same mail.
 */
import { partiesVisibleTo, type SearchFilter, type SearchTerm } from '../../model/search.js';
import type { PositionedMessage } from '../ports/follow.js';
import type { SearchPort } from '../ports/search.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { searchConditions } from '../shared/search.js';
import { LOCK, type AdvisoryLock, type PostgresPool, type Query } from './pool.js';

/** The terms in tsquery syntax (for to_tsquery('simple', …)): letters and digits only, so nothing needs escaping. */
function tsQuery(terms: SearchTerm[]): string {
  return terms.map((term) => (term.kind === 'phrase' ? `(${term.words.join(' <-> ')})` : term.kind === 'prefix' ? `${term.word}:*` : term.word)).join(' & ');
}

/**
 * Each message's tsvector holds, beside its words, its parties (model/search.ts) as lexemes no query
 * can match and no body can make: '/ ' (a query's lexemes are letters and digits, the parser's never
 * hold a space), then the party's UTF-8 in hex. And two more: PARTIES_INDEXED, which an older
 * agent-bus (indexing bodies alone into the same table) never writes, and WORDS_INDEXED.
 */
function partyLexeme(party: string): string {
  return `/ ${Buffer.from(party, 'utf8').toString('hex')}`;
}

const PARTIES_INDEXED = '/ parties';
/**
 * Written by an agent-bus that reads a body's words as SQLite does (wordsSql); a row without it was
 * indexed by an older one, which took 'feat/login' or an e-mail address for a single word, and is
 * indexed again. Rows keep PARTIES_INDEXED too, so the agent-bus before this one leaves them alone.
 */
const WORDS_INDEXED = '/ words';

/**
 * What separates words besides spaces, for PostgreSQL's parser: ASCII punctuation, and the Unicode
 * punctuation, combining marks, arrows and emoji that a database in the C locale would take for
 * letters. Words are then runs of letters and digits, as for SQLite's unicode61 and the query parser.
 */
const SEPARATORS = '[!-/:-@[-`{-~\\u00a0\\u00ab\\u00b7\\u00bb\\u0300-\\u036f\\u2000-\\u206f\\u2190-\\u21ff\\U0001f300-\\U0001faff]';

/** A body's words as a tsvector: lowercased with `collation` (one that knows more than ASCII, where there is one), then split. */
function wordsSql(body: string, collation: string | null): string {
  const lowered = collation === null ? `lower(${body})` : `lower(${body} COLLATE "${collation}")`;
  return `to_tsvector('simple', regexp_replace(${lowered}, '${SEPARATORS}', ' ', 'g'))`;
}

/** Collations whose lower() knows all of Unicode, the first the database has: the C locale's knows ASCII only. */
const LOWER_COLLATIONS = ['und-x-icu', 'C.utf8', 'C.UTF-8'];

/** A tsquery (as text) matching any of these lexemes, each quoted: they hold a space. */
function anyOf(lexemes: string[]): string {
  return lexemes.map((lexeme) => `'${lexeme}'`).join(' | ');
}

/** model/search.ts partyOf, in SQL. */
function partySql(name: string): string {
  return `split_part(${name}, '/', 1)`;
}

function partyLexemeSql(party: string): string {
  return `'/ ' || encode(convert_to(${party}, 'UTF8'), 'hex')`;
}

/** The party lexemes of message row `m` (a to_group that is null has none). */
const PARTIES_TSVECTOR = `array_to_tsvector(array_remove(ARRAY['${PARTIES_INDEXED}', '${WORDS_INDEXED}', ${partyLexemeSql(partySql('m.from_agent'))},
  ${partyLexemeSql(partySql('m.to_agent'))}, ${partyLexemeSql('m.to_group')}], NULL))`;

/**
 * Positions below the 'words' mark that are looked at again. The mark moves only to where every
 * message is indexed (indexPendingSql), so these are a margin: a send takes its position a moment before
 * its transaction has an id another snapshot could show as under way.
 */
const LATE_POSITIONS = 1000;
/** Messages indexed in one statement, at most. */
const INDEX_BATCH = 50_000;
/** The least time between two rounds of indexing in the background (keepSearchIndexCurrent). */
const INDEX_PAUSE_MS = 100;
/**
 * Rounds in a row that index nothing, after which the background stops even if the marks could not
 * move (a transaction it saw under way is still open): the next send or search goes on from there.
 */
const MAX_IDLE_ROUNDS = 50;

/**
 * Messages the index lacks ($1: the WORDS_INDEXED query): past the 'words' mark, less the late
 * positions. The index row is looked up by key for each (a subquery, not an anti-join the planner could
 * turn into reading the whole index), and the messages come in key order, which needs no sort.
 */
const PENDING_FOR_SEARCH = `m.seq > COALESCE((SELECT position FROM search_index WHERE name = 'words'), 0) - ${LATE_POSITIONS}
  AND (SELECT s.tsv @@ $1::tsquery FROM message_search s WHERE s.seq = m.seq) IS NOT TRUE`;

/**
 * A round of indexing: a batch of pending messages, and the marks moved to where every message is
 * indexed. A message can commit after one with a greater position, so the newest message a round saw
 * is not that place. But the transactions under way at a round's snapshot ($2) are those its snapshot
 * lists, and those whose ids came between the snapshot's xmax and the round's own id ($4), all that
 * could hold a position at or below the newest message the round saw ($3). Once each has ended, a
 * later round's snapshot shows every message up to that one, and once that round has indexed what is
 * pending, the marks may move there. Returns how many were indexed, whether the marks moved, and this
 * round's snapshot, newest message and own id, for the next.
 */
const indexPendingSql = (words: string): string => `WITH indexed AS (
    INSERT INTO message_search (seq, tsv)
    SELECT m.seq, ${words} || ${PARTIES_TSVECTOR} FROM messages m WHERE ${PENDING_FOR_SEARCH}
     ORDER BY m.seq LIMIT ${INDEX_BATCH}
    ON CONFLICT (seq) DO UPDATE SET tsv = EXCLUDED.tsv
    RETURNING seq),
  settled AS (
    -- A batch cut short leaves what lies past its last message pending.
    SELECT CASE WHEN (SELECT COUNT(*) FROM indexed) < ${INDEX_BATCH} THEN $3::bigint ELSE LEAST($3::bigint, (SELECT MAX(seq) FROM indexed)) END AS position
     WHERE $2::text IS NOT NULL AND $3::bigint IS NOT NULL
       AND NOT EXISTS (
         SELECT 1 FROM (SELECT pg_snapshot_xip($2::text::pg_snapshot) AS id
                        UNION ALL
                        SELECT n::text::xid8 FROM generate_series(pg_snapshot_xmax($2::text::pg_snapshot)::text::bigint, $4::bigint - 1) AS n) AS under_way
          WHERE NOT pg_visible_in_snapshot(under_way.id, pg_current_snapshot()))),
  marked AS (
    INSERT INTO search_index (name, position)
    SELECT marks.name, settled.position FROM settled, (VALUES ('messages'), ('parties'), ('words')) AS marks (name)
    ON CONFLICT (name) DO UPDATE SET position = GREATEST(search_index.position, EXCLUDED.position))
  SELECT (SELECT COUNT(*)::int FROM indexed) AS indexed, EXISTS (SELECT 1 FROM settled) AS settled,
    pg_current_snapshot()::text AS snapshot, (SELECT MAX(seq) FROM messages) AS newest, pg_current_xact_id()::text AS id`;

/**
 * The match of a reader's search: GIN gathers rows by the reader's parties and the query's whole words
 * and phrases, and a prefix is checked on what they gathered (GIN answers a prefix by collecting every
 * row of every word it starts, while the parties bound the rows to about the reader's own mail).
 */
function readerMatch(terms: SearchTerm[], visibleTo: NonNullable<SearchFilter['visibleTo']>, whole: string, at: (value: unknown) => string): string {
  const parties = `${at(anyOf(partiesVisibleTo(visibleTo).map(partyLexeme)))}::tsquery`;
  const words = terms.filter((term) => term.kind !== 'prefix');
  if (words.length === terms.length) return `tsv @@ (${whole} && ${parties})`;
  const gathered = words.length === 0 ? parties : `(to_tsquery('simple', ${at(tsQuery(words))}) && ${parties})`;
  return `tsv @@ ${gathered} AND ts_match_vq(tsv, ${whole})`;
}

/** A message's columns read through the search index (messages as m). */
const SEARCHED_COLUMNS = selectList(MESSAGE_FIELDS, 'm');

/** A round of indexing: how many it indexed, and whether it moved the marks. */
interface Round {
  indexed: number;
  settled: boolean;
}

/** SearchPort, and what the store around it tells the indexer: sends committed, the store closing. */
export interface PostgresSearch extends SearchPort {
  /** A batch of sends has committed: index it in the background, if asked to (keepSearchIndexCurrent). */
  sendsCommitted(): void;
  /** Stop indexing in the background, and wait for a round under way. */
  close(): Promise<void>;
}

/**
 * One store's indexing: at a search (waiting for another process's round, since a search must see
 * every message), and, once asked, in the background after each batch of sends commits.
 */
class SearchIndexer {
  private closed = false;
  /** Whether each batch of sends is indexed for search once it commits (keepSearchIndexCurrent). */
  private indexingAfterSends = false;
  /** The background indexing under way, if any, and whether sends committed since it looked. */
  private backgroundIndexing: Promise<void> | null = null;
  private indexAgain = false;
  /** Ends the background indexing's pause between rounds at once (on close). */
  private endIndexPause: (() => void) | null = null;
  /** What this process's last round of indexing saw: its snapshot and newest message (indexPendingSql). */
  private lastIndexRound: { snapshot: string; newest: string | null; id: string } | null = null;
  /** indexPendingSql with the words read as this database can (LOWER_COLLATIONS), once known. */
  private indexPendingText: string | null = null;

  constructor(private readonly pool: PostgresPool) {}

  keepUpWithSends(): void {
    this.indexingAfterSends = true;
  }

  sendsCommitted(): void {
    if (this.indexingAfterSends) this.indexInBackground();
  }

  /**
   * Index what is not indexed yet, and again what an older agent-bus indexed otherwise (a row without
   * WORDS_INDEXED): at or after LATE_POSITIONS below the 'words' position, up to which every message
   * is indexed. An older agent-bus indexes only past its own mark ('messages' or 'parties'), which
   * this version moves too. A search that finds nothing to do writes nothing and takes no lock.
   */
  async indexForSearch(): Promise<void> {
    const due = await this.pool.one<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM messages m WHERE ${PENDING_FOR_SEARCH}) AS due`, [anyOf([WORDS_INDEXED])]);
    if (due?.due) await this.indexPending(true);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.endIndexPause?.();
    await this.backgroundIndexing;
  }

  /**
   * Index the sends just committed, off their path: the sends have been answered already, and the
   * tokenizing runs on a connection of its own while the next batch is written. One round at a time;
   * sends that commit meanwhile wait for the next, at least INDEX_PAUSE_MS later, so that a burst is
   * indexed in a few large rounds rather than one per batch (each round has a cost of its own: its
   * plan, and the positions it looks at again). A failure is left to the next search.
   */
  private indexInBackground(): void {
    if (this.closed) return;
    if (this.backgroundIndexing !== null) {
      this.indexAgain = true;
      return;
    }
    this.backgroundIndexing = (async () => {
      let idleRounds = 0;
      for (;;) {
        this.indexAgain = false;
        const round = await this.indexPending(false);
        if (this.closed) return;
        // Done once a round finds nothing to index and moves the marks past what the rounds before it
        // indexed. A round that found another process's indexer at work (which may have started before
        // this process's last sends committed), or that could not move the marks yet (a transaction it
        // saw under way), is followed by another, a while at most.
        const settled = round !== null && round.indexed === 0 && round.settled;
        idleRounds = round !== null && round.indexed > 0 ? 0 : idleRounds + 1;
        if (!this.indexAgain && (settled || idleRounds >= MAX_IDLE_ROUNDS)) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, INDEX_PAUSE_MS);
          this.endIndexPause = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.endIndexPause = null;
        if (this.closed) return;
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        this.backgroundIndexing = null;
      });
  }

  /**
   * Index what is pending, a batch a transaction (a bus indexed all at once after an upgrade does it
   * in steps, each moving the mark on). Each batch holds the indexer's advisory lock, so two processes
   * never tokenize the same mail: `wait` waits for the other (a search must see every message), else
   * this leaves the work to it (the background, whose mail the other's next round or a search takes).
   * A search ends with a round that moves the marks, if it can, so the next does not look again at
   * what this one indexed.
   */
  private async indexPending(wait: boolean): Promise<Round | null> {
    for (;;) {
      const round = await this.indexRound(wait);
      if (round === null) return null;
      if (round.indexed >= INDEX_BATCH) continue;
      if (!wait || round.settled || round.indexed === 0) return round;
    }
  }

  /** The statement of a round of indexing, made once: which collation lowercases depends on the database. */
  private async indexPendingStatement(query: Query): Promise<string> {
    if (this.indexPendingText === null) {
      const found = await query(
        'SELECT collname FROM pg_collation WHERE collname = ANY($1::text[]) AND collencoding IN (-1, (SELECT encoding FROM pg_database WHERE datname = current_database()))',
        [LOWER_COLLATIONS],
      );
      const names = found.rows.map((row) => row.collname as string);
      const collation = LOWER_COLLATIONS.find((name) => names.includes(name)) ?? null;
      this.indexPendingText = indexPendingSql(wordsSql('m.body', collation));
    }
    return this.indexPendingText;
  }

  /** One round of indexPendingSql, after the one before it in this process; null when another indexer has the turn. */
  private indexRound(wait: boolean): Promise<Round | null> {
    const lock: AdvisoryLock = [LOCK.searchIndex, 'message_search'];
    return this.pool.transaction(
      wait ? [lock] : [],
      async (query) => {
        if (!wait) {
          const mine = await query('SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS mine', lock);
          if (mine.rows[0]?.mine !== true) return null;
        }
        // A statement after the lock's: its snapshot holds what the indexer before this one wrote.
        const before = this.lastIndexRound;
        const params = [anyOf([WORDS_INDEXED]), before?.snapshot ?? null, before?.newest ?? null, before?.id ?? null];
        const row = (await query(await this.indexPendingStatement(query), params)).rows[0] as { indexed: number; settled: boolean; snapshot: string; newest: string | null; id: string } | undefined;
        if (row === undefined) return { indexed: 0, settled: false };
        this.lastIndexRound = { snapshot: row.snapshot, newest: row.newest, id: row.id };
        return { indexed: row.indexed, settled: row.settled };
      },
      false,
    );
  }
}

/** The copies matching `terms` that `filter` lets through, newest first, from an index brought up to date. */
async function searchIndexed(pool: PostgresPool, terms: SearchTerm[], filter: SearchFilter, limit: number): Promise<PositionedMessage[]> {
  const params: unknown[] = [tsQuery(terms), limit];
  const at = (value: unknown): string => `$${params.push(value)}`;
  const whole = `to_tsquery('simple', $1)`;
  const before = filter.before === null ? '' : ` AND seq < ${at(filter.before)}`;
  let matches: string;
  const where: string[] = [];
  if (filter.visibleTo === null) {
    // The whole bus: the planner chooses between GIN and reading the newest rows first.
    matches = 'message_search s';
    where.push(`s.tsv @@ ${whole}${before.replace('seq', 's.seq')}`);
  } else {
    // A reader's matches, about as many as its own mail: newest first, fenced (OFFSET 0) so that
    // messages is joined to them in that order up to the limit, not to all of them before a sort.
    matches = `(SELECT seq FROM message_search WHERE ${readerMatch(terms, filter.visibleTo, whole, at)}${before} ORDER BY seq DESC OFFSET 0) s`;
  }
  // The index found mail with one of the reader's parties; these are the rule itself.
  where.push(...searchConditions(filter, { bind: at, startsWith: (column, prefix) => `starts_with(${column}, ${prefix})` }));
  const rows = await pool.read<PositionedMessage & { position: string }>(
    `SELECT s.seq AS position, ${SEARCHED_COLUMNS} FROM ${matches} JOIN messages m ON m.seq = s.seq
      WHERE ${where.join(' AND ')} ORDER BY s.seq DESC LIMIT $2`,
    params,
  );
  return rows.map((row) => ({ ...row, position: Number(row.position) }));
}

export function postgresSearch(pool: PostgresPool): PostgresSearch {
  const indexer = new SearchIndexer(pool);
  return {
    async searchMessages(terms, filter, limit) {
      if (limit <= 0) return [];
      await indexer.indexForSearch();
      return searchIndexed(pool, terms, filter, limit);
    },
    indexForSearch: () => indexer.indexForSearch(),
    keepSearchIndexCurrent: () => indexer.keepUpWithSends(),
    sendsCommitted: () => indexer.sendsCommitted(),
    close: () => indexer.close(),
  };
}
