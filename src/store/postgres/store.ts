/**
 * The PostgreSQL backend, for a fleet on many machines: a small pool per
 * process, every read-modify-write one transaction. What SQLite serializes
 * with its single writer is serialized here by transaction-level advisory
 * locks on what the operation decides about (a repo's inbox, a session's
 * notices, a channel, a client address, an agent's wakes) and row locks on the
 * copies a claim updates, so claims are decided exactly once across processes.
 * Every write transaction sends a NOTIFY (a distinct payload) as it commits.
 */
import type pg from 'pg';
import { StoreUnavailableError } from '../../model/errors.js';
import { uniqueToken } from '../../model/ids.js';
import type { NoticeCandidate, NoticeRecord, Severity } from '../../model/notices.js';
import type {
  AddressMove,
  AgentRecord,
  BrainState,
  ChangeFeed,
  ChannelCount,
  ClaimDecision,
  ClaimInput,
  ClaimOutcome,
  ClientRoute,
  DeliverNoticesInput,
  DueNoticesQuery,
  FanoutCopy,
  ForgetOutcome,
  InboxDecision,
  InboxQuery,
  InboxTake,
  MessageRecord,
  NoticeClearTarget,
  NoticeDecision,
  NoticeFilter,
  NoticeListing,
  OrphanMail,
  PublishNoticeInput,
  ReadOutcome,
  ReaderIdentity,
  ReconcileInput,
  ReconcileOutcome,
  Registration,
  RenameInput,
  RosterQuery,
  RosterSnapshot,
  SendInput,
  SessionKey,
  SessionRecord,
  Store,
  TakeOutcome,
  ShownTake,
  HeldTake,
  PositionedMessage,
  TokenRecord,
  PruneCounts,
  PruneInput,
  StoreIntegrity,
  MailWindow,
  MessageGlance,
  ThreadCount,
} from '../ports.js';
import { GLANCE_CHARS, MAIL_PAIRS } from '../ports.js';
import { partiesVisibleTo, type SearchFilter, type SearchTerm } from '../../model/search.js';

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
const SEARCHED_COLUMNS = `m.message_id AS "messageId", m.from_agent AS "fromAgent", m.to_agent AS "toAgent", m.body,
  m.thread_id AS "threadId", m.sent_at AS "sentAt", m.read_at AS "readAt", m.delivered_at AS "deliveredAt",
  m.addressed_to AS "addressedTo", m.fanout_id AS "fanoutId", m.to_group AS "toGroup", m.claimed_by AS "claimedBy",
  m.delivered_via AS "deliveredVia", m.read_via AS "readVia"`;
import { plannedMessages } from '../shared/send-queue.js';
import { readRecord, type ReceiptRecord, type ReceiptWay } from '../../model/receipts.js';
import { TABLES, type TableModel, type TableRow } from '../tables.js';
import { CHANGE_CHANNEL, postgresChangeFeed } from './changes.js';
import { connectionConfig, createPool, displayUrl, isUnreachable, unreachable, type PostgresOptions } from './connection.js';
import { migrate } from './migrate.js';
import { TARGET_VERSION } from './schema.js';

type Query = (sql: string, params?: unknown[]) => Promise<pg.QueryResult>;

const AGENT_COLUMNS = `name, repo_path AS "repoPath", registered_at AS "registeredAt", last_seen AS "lastSeen",
  group_name AS "groupName", client, topic`;

const MESSAGE_COLUMNS = `message_id AS "messageId", from_agent AS "fromAgent", to_agent AS "toAgent", body,
  thread_id AS "threadId", sent_at AS "sentAt", read_at AS "readAt", delivered_at AS "deliveredAt",
  addressed_to AS "addressedTo", fanout_id AS "fanoutId", to_group AS "toGroup", claimed_by AS "claimedBy",
  delivered_via AS "deliveredVia", read_via AS "readVia"`;

/** A copy's receipt: the message without its body. */
const RECEIPT_COLUMNS = `message_id AS "messageId", fanout_id AS "fanoutId", from_agent AS "fromAgent", to_agent AS "toAgent",
  addressed_to AS "addressedTo", thread_id AS "threadId", sent_at AS "sentAt", claimed_by AS "claimedBy",
  delivered_at AS "deliveredAt", delivered_via AS "deliveredVia", read_at AS "readAt", read_via AS "readVia"`;

/** Mark copies ($3) read at $1 by $2, and delivered where they were not yet; a copy read already keeps its receipt. */
const MARK_READ = `UPDATE messages SET read_at = $1, read_via = $2,
    delivered_via = CASE WHEN delivered_at IS NULL THEN $2 ELSE delivered_via END, delivered_at = COALESCE(delivered_at, $1)
  WHERE message_id = ANY($3::text[]) AND read_at IS NULL`;

const SESSION_COLUMNS = `server_pid AS "serverPid", server_started AS "serverStarted", name, client_address AS "clientAddress",
  repo_path AS "repoPath", lineage, session_key AS "sessionKey", boot_id AS "bootId", pid_ns AS "pidNs",
  started_at AS "startedAt", last_seen AS "lastSeen", ended_at AS "endedAt"`;

const ROUTE_COLUMNS = `thread_id AS "threadId", agent, client, executable, client_pid AS "clientPid", client_started AS "clientStarted",
  repo_path AS "repoPath", updated_at AS "updatedAt", turn_state AS "turnState", queued_at AS "queuedAt"`;

const NOTICE_COLUMNS = `n.notice_id AS "noticeId", n.channel, n.severity, n.title, n.body, n.source, n.priority,
  n.content_hash AS "contentHash", n.created_at AS "createdAt", n.expires_at AS "expiresAt"`;

const BRAIN_COLUMNS = `channel, source_kind AS "sourceKind", location, content_hash AS "contentHash", entry_count AS "entryCount",
  cut_by_cap AS "cutByCap", warnings, last_fetch_at AS "lastFetchAt", last_ok_at AS "lastOkAt", last_error AS "lastError"`;

const SEVERITY_RANK = `CASE n.severity WHEN 'critical' THEN 0 WHEN 'alert' THEN 1 ELSE 2 END`;

const SESSION_KEY = 'server_pid = $1 AND server_started = $2 AND client_address = $3';

/** The inbox (QUERIES.md): $1 now, $2 the reader, $3 its repo, $4 its shared address (sessions), $5 shared or the reader, $6 the bare repo name. */
const NOT_LEASED = '(m.lease_until IS NULL OR m.lease_until < $1)';
const NO_OWN_COPY = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = $3 AND s.to_agent = $2))`;
const NO_OWN_OR_SHARED_COPY = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = $3 AND s.to_agent IN ($2, $5)))`;
const INBOX_UNION = `
  SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.to_agent = $2 AND m.read_at IS NULL AND ${NOT_LEASED}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS} FROM messages m
   WHERE m.to_agent = $4 AND m.read_at IS NULL AND ${NOT_LEASED} AND m.from_agent <> $2 AND ${NO_OWN_COPY}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS} FROM messages m
   WHERE m.to_agent = $6 AND m.read_at IS NULL AND ${NOT_LEASED}
     AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.name = $6) AND ${NO_OWN_OR_SHARED_COPY}`;

/** Advisory lock spaces: the first key of pg_advisory_xact_lock(int, int). */
const LOCK = { inbox: 1, notices: 2, channel: 3, client: 4, wakes: 5, searchIndex: 6 } as const;

/** Most sends one transaction carries, so a burst never holds its locks for long. */
const MAX_SENDS_PER_COMMIT = 256;

interface QueuedSend {
  input: SendInput;
  resolve(records: MessageRecord[]): void;
  reject(error: unknown): void;
}

/** A send its own plan refused (an unknown recipient): nothing of it was written. */
class PlanRefused extends Error {
  constructor(readonly reason: unknown) {
    super('send refused by its plan');
  }
}

function isCriticalOnly(query: DueNoticesQuery): boolean {
  return query.severities.length === 1 && query.severities[0] === 'critical';
}

const TOKEN_COLUMNS = `token_id AS "tokenId", agent, repo_path AS "repoPath", secret_hash AS "secretHash", scopes, created_at AS "createdAt", expires_at AS "expiresAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

export class PostgresStore implements Store {
  readonly location: string;
  private readonly pool: pg.Pool;
  private ready: Promise<void> | null = null;
  private sendQueue: QueuedSend[] = [];
  /** Whether a batch of sends is being written: later sends wait and join the next batch. */
  private flushing = false;
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

  constructor(
    private readonly url: string,
    private readonly options: PostgresOptions,
  ) {
    this.location = displayUrl(url);
    this.pool = createPool(url, options);
  }

  /** The schema, migrated once per process before the first statement. */
  private prepare(): Promise<void> {
    this.ready ??= migrate(this.pool).then(
      () => undefined,
      (error: unknown) => {
        this.ready = null;
        throw this.translate(error);
      },
    );
    return this.ready;
  }

  private translate(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) return error;
    return isUnreachable(error) ? unreachable(this.url, error) : error;
  }

  private async read<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    await this.prepare();
    try {
      return (await this.pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw this.translate(error);
    }
  }

  private async one<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.read<T>(sql, params))[0];
  }

  /**
   * One transaction: the advisory locks first (in a fixed order, so two transactions never
   * wait on each other), then the work, then the NOTIFY that tells waiters to look again.
   */
  private async transaction<T>(locks: Array<[number, string]>, work: (query: Query) => Promise<T>, notify = true): Promise<T> {
    await this.prepare();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.translate(error);
    }
    const query: Query = (sql, params) => client.query(sql, params);
    try {
      // BEGIN and the locks in one round trip, the NOTIFY and COMMIT in another: hooks pay for each.
      // The lock keys are the bus's own names (repos, sessions, channels), quoted as literals.
      const ordered = [...locks].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      await query(['BEGIN', ...ordered.map(([space, key]) => `SELECT pg_advisory_xact_lock(${space}, hashtext(${client.escapeLiteral(key)}))`)].join('; '));
      const result = await work(query);
      // Each payload distinct: PostgreSQL folds identical ones within a transaction.
      await query(notify ? `SELECT pg_notify('${CHANGE_CHANNEL}', '${uniqueToken()}'); COMMIT` : 'COMMIT');
      return result;
    } catch (error) {
      await query('ROLLBACK').catch(() => undefined);
      throw this.translate(error);
    } finally {
      client.release();
    }
  }

  /**
   * One statement as a transaction of its own (the implicit one PostgreSQL gives a single
   * statement): one round trip instead of BEGIN, the statement and COMMIT. With `notify`, the
   * NOTIFY rides in the same statement, so it still goes out only if the write commits.
   * Returns the rows the write touched.
   */
  private async writeAlone(sql: string, params: unknown[], notify = true): Promise<number> {
    if (!notify) {
      await this.prepare();
      try {
        return (await this.pool.query(sql, params)).rowCount ?? 0;
      } catch (error) {
        throw this.translate(error);
      }
    }
    // A data-modifying WITH runs exactly once whether or not it is read; reading it gives the count.
    const statement = `WITH written AS (${sql} RETURNING 1)
      SELECT (SELECT COUNT(*) FROM written)::int AS n, pg_notify('${CHANGE_CHANNEL}', '${uniqueToken()}')`;
    return (await this.one<{ n: number }>(statement, params))?.n ?? 0;
  }

  private async registerWith(query: Query, registrations: Registration[], now: string): Promise<void> {
    for (const reg of registrations) {
      const update = reg.authoritative
        ? 'repo_path = excluded.repo_path, last_seen = excluded.last_seen, group_name = excluded.group_name, client = excluded.client'
        : 'last_seen = excluded.last_seen, group_name = excluded.group_name, client = excluded.client';
      await query(
        `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client) VALUES ($1, $2, $3, $3, $4, $5)
         ON CONFLICT (name) DO UPDATE SET ${update}`,
        [reg.name, reg.repoPath, now, reg.groupName, reg.client],
      );
    }
  }

  // ------------------------------------------------------------------ roster

  async register(registrations: Registration[], now: string): Promise<void> {
    await this.transaction([], (query) => this.registerWith(query, registrations, now));
  }

  async touch(names: string[], now: string): Promise<void> {
    if (names.length === 0) return;
    await this.writeAlone('UPDATE agents SET last_seen = $1 WHERE name = ANY($2::text[])', [now, names]);
  }

  async getAgent(name: string): Promise<AgentRecord | null> {
    return (await this.one<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = $1`, [name])) ?? null;
  }

  private repoRowsSql = `SELECT ${AGENT_COLUMNS} FROM agents
    WHERE group_name = $1 OR name = $1 OR (group_name IS NULL AND name >= $2 AND name < $3) ORDER BY name`;

  private repoParams(group: string): unknown[] {
    // '0' follows '/': the range is every name that begins `group/`.
    return [group, `${group}/`, `${group}0`];
  }

  async agentsOfRepo(group: string): Promise<AgentRecord[]> {
    return this.read<AgentRecord>(this.repoRowsSql, this.repoParams(group));
  }

  async roster(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[]): Promise<RosterSnapshot> {
    return this.transaction(
      [],
      async (query) => {
        await query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const agents = (await query(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`)).rows as AgentRecord[];
        const unread = (await query('SELECT to_agent AS "toAgent", COUNT(*)::int AS n FROM messages WHERE read_at IS NULL GROUP BY to_agent ORDER BY to_agent'))
          .rows as Array<{ toAgent: string; n: number }>;
        const orphans: OrphanMail[] = [];
        const copyHolders = new Map<string, string[]>();
        for (const name of orphansOf(agents, unread.map((row) => row.toAgent))) {
          const rows = (
            await query('SELECT to_agent AS "toAgent", message_id AS "messageId", fanout_id AS "fanoutId" FROM messages WHERE to_agent = $1 AND read_at IS NULL ORDER BY message_id', [name])
          ).rows as OrphanMail[];
          orphans.push(...rows);
          for (const { fanoutId } of rows) {
            if (fanoutId === null || copyHolders.has(fanoutId)) continue;
            const copies = (await query('SELECT to_agent AS "toAgent" FROM messages WHERE fanout_id = $1', [fanoutId])).rows as Array<{ toAgent: string }>;
            copyHolders.set(fanoutId, copies.map((copy) => copy.toAgent));
          }
        }
        const sessionHolders = (await query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ended_at IS NULL ORDER BY started_at, server_pid`)).rows as SessionRecord[];
        return { agents, unread, orphans, copyHolders, sessionHolders };
      },
      false,
    );
  }

  async forget(name: string): Promise<ForgetOutcome> {
    return this.transaction([], async (query) => {
      const removed = ((await query('DELETE FROM agents WHERE name = $1', [name])).rowCount ?? 0) > 0;
      const pending = (await query('SELECT COUNT(*)::int AS n FROM messages WHERE to_agent = $1 AND read_at IS NULL', [name])).rows[0]?.n ?? 0;
      return { removed, pending };
    });
  }

  async removeAgents(names: string[]): Promise<string[]> {
    if (names.length === 0) return [];
    return this.transaction([], async (query) =>
      ((await query('DELETE FROM agents WHERE name = ANY($1::text[]) RETURNING name', [names])).rows as Array<{ name: string }>).map((row) => row.name),
    );
  }

  async agentsAt(repoPath: string): Promise<AgentRecord[]> {
    return this.read<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE repo_path = $1 ORDER BY name`, [repoPath]);
  }

  async setTopic(name: string, topic: string | null): Promise<void> {
    await this.writeAlone('UPDATE agents SET topic = $1 WHERE name = $2', [topic, name]);
  }

  async retire(old: string, moveTo: string | null): Promise<{ removed: boolean; moved: number; left: number }> {
    return this.transaction([], async (query) => {
      const removed = ((await query('DELETE FROM agents WHERE name = $1', [old])).rowCount ?? 0) > 0;
      if (moveTo === null) {
        const left = (await query('SELECT COUNT(*)::int AS n FROM messages WHERE to_agent = $1 AND read_at IS NULL', [old])).rows[0]?.n ?? 0;
        return { removed, moved: 0, left };
      }
      const moved = (await query('UPDATE messages SET to_agent = $1 WHERE to_agent = $2 AND read_at IS NULL', [moveTo, old])).rowCount ?? 0;
      return { removed, moved, left: 0 };
    });
  }

  // -------------------------------------------------------------------- mail

  private async candidates(query: Query, roster: RosterQuery): Promise<AgentRecord[]> {
    switch (roster.kind) {
      case 'all':
        return (await query(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`)).rows as AgentRecord[];
      case 'name':
        return (await query(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = $1`, [roster.name])).rows as AgentRecord[];
      case 'group':
        return (await query(this.repoRowsSql, this.repoParams(roster.group))).rows as AgentRecord[];
    }
  }

  /**
   * Sends made in the same tick share one transaction, each in a savepoint of its own, and each
   * resolves once that transaction has committed: a commit costs more than the rows it writes.
   * A send whose plan refuses it, or that fails, is rolled back to its savepoint alone.
   */
  send(input: SendInput): Promise<MessageRecord[]> {
    return new Promise((resolve, reject) => {
      this.sendQueue.push({ input, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        queueMicrotask(() => void this.flushSends());
      }
    });
  }

  /**
   * One batch at a time: the sends that arrive while a batch commits (a hub's concurrent requests
   * come in ticks of their own) wait for it and go together in the next, instead of each opening a
   * transaction of its own beside it.
   */
  private async flushSends(): Promise<void> {
    try {
      await this.flushQueued();
    } finally {
      this.flushing = false;
      // A send queued as the last batch settled: it starts the next flush itself.
      if (this.sendQueue.length > 0) {
        this.flushing = true;
        queueMicrotask(() => void this.flushSends());
      }
    }
  }

  private async flushQueued(): Promise<void> {
    while (this.sendQueue.length > 0) {
      const batch = this.sendQueue.splice(0, MAX_SENDS_PER_COMMIT);
      const outcomes: Array<{ records: MessageRecord[] } | { error: unknown }> = [];
      try {
        await this.transaction([], async (query) => {
          // The roster rows each kind of address reads, once per batch, until a send registers someone.
          const seen = new Map<string, AgentRecord[]>();
          const pending: MessageRecord[] = [];
          for (const { input } of batch) {
            if (input.register.length === 0) {
              // Nothing written before the plan: a refusal needs no undoing. Its rows join the batch's one INSERT.
              try {
                const records = await this.planWith(query, input, seen);
                pending.push(...records);
                outcomes.push({ records });
              } catch (error) {
                if (!(error instanceof PlanRefused)) throw error;
                outcomes.push({ error: error.reason });
              }
              continue;
            }
            // A send that registers its speaker runs in a savepoint: a refusal undoes the registration too.
            await this.insertMessages(query, pending.splice(0));
            seen.clear();
            await query('SAVEPOINT send');
            try {
              await this.registerWith(query, input.register, input.sentAt);
              const records = await this.planWith(query, input, new Map());
              await this.insertMessages(query, records);
              await query('RELEASE SAVEPOINT send');
              outcomes.push({ records });
            } catch (error) {
              await query('ROLLBACK TO SAVEPOINT send');
              outcomes.push({ error: error instanceof PlanRefused ? error.reason : error });
            }
          }
          await this.insertMessages(query, pending);
        });
      } catch (error) {
        for (const queued of batch) queued.reject(error);
        continue;
      }
      batch.forEach((queued, index) => {
        const outcome = outcomes[index];
        if (outcome && 'records' in outcome) queued.resolve(outcome.records);
        else queued.reject(outcome ? this.translate(outcome.error) : new Error('send outcome missing'));
      });
      if (this.indexingAfterSends) this.indexInBackground();
    }
  }

  /** Read the roster rows the send's address needs (or the batch's earlier read of them) and plan it: the rows it writes. */
  private async planWith(query: Query, input: SendInput, seen: Map<string, AgentRecord[]>): Promise<MessageRecord[]> {
    const key = JSON.stringify(input.roster);
    let candidates = seen.get(key);
    if (candidates === undefined) {
      candidates = await this.candidates(query, input.roster);
      seen.set(key, candidates);
    }
    let plan;
    try {
      plan = input.plan(candidates);
    } catch (error) {
      throw new PlanRefused(error);
    }
    return plannedMessages(input, plan);
  }

  /** One statement for any number of rows: a whole fan-out, or a whole batch of sends. */
  private async insertMessages(query: Query, records: MessageRecord[]): Promise<void> {
    if (records.length === 0) return;
    const column = <K extends keyof MessageRecord>(key: K): Array<MessageRecord[K]> => records.map((record) => record[key]);
    await query(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
      [
        column('messageId'),
        column('fromAgent'),
        column('toAgent'),
        column('body'),
        column('threadId'),
        column('sentAt'),
        column('addressedTo'),
        column('fanoutId'),
        column('toGroup'),
      ],
    );
  }

  private inboxParams(query: InboxQuery): unknown[] {
    const { reader } = query;
    const shared = reader.isSession ? reader.clientAddress : null;
    return [query.now, reader.name, reader.group, shared, shared ?? reader.name, reader.group !== reader.name ? reader.group : null];
  }

  private inboxSql(actionableOnly: boolean, limitParam: string): string {
    const filter = actionableOnly ? 'WHERE x."claimedBy" IS NULL OR x."claimedBy" = $2' : '';
    return `SELECT * FROM (${INBOX_UNION}) x ${filter} ORDER BY x."sentAt", x."messageId" LIMIT ${limitParam}`;
  }

  async peekInbox(query: InboxQuery): Promise<MessageRecord[]> {
    if (query.limit <= 0) return [];
    return this.read<MessageRecord>(this.inboxSql(query.actionableOnly, '$7'), [...this.inboxParams(query), query.limit]);
  }

  /** Select under the repo's inbox lock, lock the copies, decide once, claim. */
  private async takeRows(query: Query, input: InboxTake): Promise<InboxDecision> {
    const { reader } = input.query;
    const rows = (await query(this.inboxSql(input.query.actionableOnly, '$7'), [...this.inboxParams(input.query), input.query.limit])).rows as MessageRecord[];
    const fanouts = [...new Set(rows.map((row) => row.fanoutId).filter((id): id is string => id !== null))];
    const copies =
      fanouts.length === 0
        ? []
        : ((
            await query(
              `SELECT message_id AS "messageId", fanout_id AS "fanoutId", to_agent AS "toAgent", claimed_by AS "claimedBy", read_at AS "readAt"
                 FROM messages WHERE fanout_id = ANY($1::text[]) AND to_group = $2 ORDER BY message_id FOR UPDATE`,
              [fanouts, reader.group],
            )
          ).rows as FanoutCopy[]);
    const decision = input.decide(rows, copies);
    if (decision.claims.length > 0) {
      await query('UPDATE messages SET claimed_by = $1 WHERE fanout_id = ANY($2::text[]) AND to_group = $3 AND claimed_by IS NULL', [reader.name, decision.claims, reader.group]);
    }
    return decision;
  }

  private async anyMail(query: InboxQuery): Promise<boolean> {
    return (await this.read(this.inboxSql(query.actionableOnly, '1'), this.inboxParams(query))).length > 0;
  }

  async readInbox(input: InboxTake & { via: ReceiptWay }): Promise<ReadOutcome> {
    const empty: ReadOutcome = { messages: [], decision: { rows: [], claims: [], contested: [], settle: [] } };
    // Most reads find nothing: answer those without a transaction or a lock.
    if (input.query.limit <= 0 || !(await this.anyMail(input.query))) return empty;
    return this.transaction([[LOCK.inbox, input.query.reader.group]], async (query) => {
      const decision = await this.takeRows(query, input);
      const now = input.query.now;
      await query(MARK_READ, [now, input.via, [...decision.rows.map((row) => row.messageId), ...decision.settle]]);
      const messages = decision.rows.map((row) => readRecord(row, now, input.via));
      return { messages, decision };
    });
  }

  async takeInbox(input: InboxTake & { lease: string }): Promise<TakeOutcome> {
    const empty: TakeOutcome = { messages: [], decision: { rows: [], claims: [], contested: [], settle: [] }, lease: input.lease };
    if (input.query.limit <= 0 || !(await this.anyMail(input.query))) return empty;
    return this.transaction([[LOCK.inbox, input.query.reader.group]], async (query) => {
      const decision = await this.takeRows(query, input);
      if (decision.rows.length > 0) {
        await query('UPDATE messages SET lease_until = $1 WHERE message_id = ANY($2::text[])', [input.lease, decision.rows.map((row) => row.messageId)]);
      }
      return { messages: decision.rows, decision, lease: input.lease };
    });
  }

  async releaseLeases(reader: ReaderIdentity, taken: HeldTake): Promise<void> {
    if (taken.messageIds.length === 0) return;
    await this.transaction([[LOCK.inbox, reader.group]], async (query) => {
      // Claims first: which fan-outs the take holds is read from its leased rows.
      if (taken.claims.length > 0) {
        await query(
          `UPDATE messages SET claimed_by = NULL WHERE fanout_id = ANY($1::text[]) AND to_group = $2 AND claimed_by = $3 AND read_at IS NULL
             AND fanout_id IN (SELECT fanout_id FROM messages WHERE message_id = ANY($4::text[]) AND lease_until = $5)`,
          [taken.claims, reader.group, reader.name, taken.messageIds, taken.lease],
        );
      }
      await query('UPDATE messages SET lease_until = NULL WHERE message_id = ANY($1::text[]) AND read_at IS NULL AND lease_until = $2', [taken.messageIds, taken.lease]);
    });
  }

  async markDelivered(shown: ShownTake, now: string, via: ReceiptWay): Promise<MessageRecord[]> {
    if (shown.messageIds.length === 0) return [];
    const { reader } = shown;
    const shared = reader.isSession ? reader.clientAddress : null;
    // One statement, one round trip: the rows still the take's, then the copies they settle, then the NOTIFY.
    const rows = await this.read<MessageRecord>(
      `WITH marked AS (
         ${MARK_READ} AND lease_until = $4 AND to_agent IN ($5, $6, $7)
         RETURNING ${MESSAGE_COLUMNS}
       ), settled AS (
         UPDATE messages SET read_at = $1, read_via = $2,
             delivered_via = CASE WHEN delivered_at IS NULL THEN $2 ELSE delivered_via END, delivered_at = COALESCE(delivered_at, $1)
          WHERE message_id = ANY($8::text[]) AND read_at IS NULL AND to_agent = $6 AND fanout_id IN (SELECT "fanoutId" FROM marked)
         RETURNING 1
       )
       SELECT marked.*, (SELECT COUNT(*) FROM settled) AS settled, pg_notify('${CHANGE_CHANNEL}', '${uniqueToken()}') AS notified
         FROM marked ORDER BY "sentAt", "messageId"`,
      [now, via, shown.messageIds, shown.lease, reader.name, shared, reader.group !== reader.name ? reader.group : null, shown.settle],
    );
    return rows.map(({ settled: _settled, notified: _notified, ...row }: MessageRecord & { settled?: unknown; notified?: unknown }) => row);
  }

  async recordDelivered(messageIds: string[], now: string, via: ReceiptWay): Promise<string[]> {
    if (messageIds.length === 0) return [];
    // Most shows find every copy delivered already: answer those without a write (and its NOTIFY).
    const pending = await this.read<{ id: string }>('SELECT message_id AS id FROM messages WHERE message_id = ANY($1::text[]) AND delivered_at IS NULL', [messageIds]);
    if (pending.length === 0) return [];
    return this.transaction([], async (query) => {
      const marked = await query('UPDATE messages SET delivered_at = $1, delivered_via = $2 WHERE message_id = ANY($3::text[]) AND delivered_at IS NULL RETURNING message_id', [now, via, messageIds]);
      return (marked.rows as Array<{ message_id: string }>).map((row) => row.message_id).sort();
    });
  }

  async receipts(id: string): Promise<ReceiptRecord[]> {
    const own = await this.one<{ fanoutId: string | null }>('SELECT fanout_id AS "fanoutId" FROM messages WHERE message_id = $1', [id]);
    if (own !== undefined && own.fanoutId === null) return this.read<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE message_id = $1`, [id]);
    return this.read<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE fanout_id = $1 ORDER BY to_agent, message_id`, [own?.fanoutId ?? id]);
  }

  async sendIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // Ranges rather than LIKE, so the key and the fan-out index answer whatever the prefix holds.
    const rows = await this.read<{ id: string }>(
      `SELECT COALESCE(fanout_id, message_id) AS id FROM messages WHERE message_id >= $1 AND message_id < $2
       UNION SELECT fanout_id FROM messages WHERE fanout_id >= $1 AND fanout_id < $2
       ORDER BY id LIMIT $3`,
      [prefix, `${prefix}\u{10FFFF}`, limit],
    );
    return rows.map((row) => row.id);
  }

  async pendingCount(reader: ReaderIdentity): Promise<number> {
    // Leased mail is still unread: count it, whatever its lease.
    const params = this.inboxParams({ reader, limit: 0, actionableOnly: false, now: '9999' });
    return (await this.one<{ n: number }>(`SELECT COUNT(*)::int AS n FROM (${INBOX_UNION}) x`, params))?.n ?? 0;
  }

  async thread(threadId: string, limit: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    return this.read<MessageRecord>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = $1 ORDER BY sent_at, message_id LIMIT $2`, [threadId, limit]);
  }

  async threadIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    const rows = await this.read<{ thread_id: string }>(
      'SELECT DISTINCT thread_id FROM messages WHERE thread_id >= $1 AND thread_id < $2 ORDER BY thread_id LIMIT $3',
      [prefix, `${prefix}\u{10FFFF}`, limit],
    );
    return rows.map((row) => row.thread_id);
  }

  async glancesBefore(before: number | null, limit: number): Promise<MessageGlance[]> {
    if (limit <= 0) return [];
    const rows = await this.read<MessageGlance & { position: string }>(
      `SELECT seq AS position, thread_id AS "threadId", from_agent AS "fromAgent", to_agent AS "toAgent", addressed_to AS "addressedTo",
         sent_at AS "sentAt", left(body, ${GLANCE_CHARS}) AS preview
         FROM messages WHERE seq < $1 ORDER BY seq DESC LIMIT $2`,
      [before ?? Number.MAX_SAFE_INTEGER, limit],
    );
    return rows.map((row) => ({ ...row, position: Number(row.position) }));
  }

  async threadCounts(threadIds: string[]): Promise<ThreadCount[]> {
    if (threadIds.length === 0) return [];
    const rows = await this.read<Record<keyof ThreadCount, string>>(
      `SELECT thread_id AS "threadId", COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends, COUNT(*) AS copies,
         COUNT(*) FILTER (WHERE read_at IS NULL) AS unread, MIN(sent_at) AS "firstSentAt", MAX(sent_at) AS "lastSentAt", MAX(seq) AS "lastPosition"
         FROM messages WHERE thread_id = ANY($1::text[]) GROUP BY thread_id`,
      [threadIds],
    );
    return rows.map((row) => ({ ...row, sends: Number(row.sends), copies: Number(row.copies), unread: Number(row.unread), lastPosition: Number(row.lastPosition) }));
  }

  async mailSince(since: string): Promise<MailWindow> {
    // One statement, so both answers see one snapshot.
    const rows = await this.read<{ kind: 'hour' | 'pair'; a: string; b: string | null; sends: string }>(
      `WITH edge AS (SELECT COALESCE((SELECT seq FROM messages WHERE sent_at < $1 ORDER BY seq DESC LIMIT 1), 0) AS seq),
            win AS (SELECT sent_at, from_agent, COALESCE(addressed_to, to_agent) AS target, COALESCE(fanout_id, message_id) AS send_id
                      FROM messages WHERE seq > (SELECT seq FROM edge) AND sent_at >= $1)
       (SELECT 'hour' AS kind, left(sent_at, 13) AS a, NULL AS b, COUNT(DISTINCT send_id) AS sends FROM win GROUP BY left(sent_at, 13))
       UNION ALL
       (SELECT 'pair', from_agent, target, COUNT(DISTINCT send_id) AS sends FROM win GROUP BY from_agent, target
         ORDER BY sends DESC, from_agent, target LIMIT ${MAIL_PAIRS})`,
      [since],
    );
    const hours = rows.filter((row) => row.kind === 'hour').map((row) => ({ hour: row.a, sends: Number(row.sends) }));
    hours.sort((left, right) => (left.hour < right.hour ? -1 : 1));
    const pairs = rows.filter((row) => row.kind === 'pair').map((row) => ({ from: row.a, to: row.b ?? '', sends: Number(row.sends) }));
    return { hours, pairs };
  }

  async searchMessages(terms: SearchTerm[], filter: SearchFilter, limit: number): Promise<PositionedMessage[]> {
    if (limit <= 0) return [];
    await this.indexForSearch();
    const params: unknown[] = [tsQuery(terms), limit];
    const at = (value: unknown): string => `$${params.push(value)}`;
    const whole = `to_tsquery('simple', $1)`;
    const where: string[] = [];
    const before = filter.before === null ? '' : ` AND seq < ${at(filter.before)}`;
    let matches: string;
    if (filter.visibleTo === null) {
      // The whole bus: the planner chooses between GIN and reading the newest rows first.
      matches = 'message_search s';
      where.push(`s.tsv @@ ${whole}${before.replace('seq', 's.seq')}`);
    } else {
      // A reader's matches, about as many as its own mail: newest first, fenced (OFFSET 0) so that
      // messages is joined to them in that order up to the limit, not to all of them before a sort.
      matches = `(SELECT seq FROM message_search WHERE ${readerMatch(terms, filter.visibleTo, whole, at)}${before} ORDER BY seq DESC OFFSET 0) s`;
      // The index found mail with one of the reader's parties; this is the rule itself.
      const me = at(filter.visibleTo.name);
      if (filter.visibleTo.repo === null) where.push(`(m.from_agent = ${me} OR m.to_agent = ${me})`);
      else {
        const repo = at(filter.visibleTo.repo);
        const under = at(`${filter.visibleTo.repo}/`);
        where.push(`(m.from_agent = ${me} OR m.to_agent = ${me} OR m.to_group = ${repo} OR m.from_agent = ${repo} OR m.to_agent = ${repo}
          OR starts_with(m.from_agent, ${under}) OR starts_with(m.to_agent, ${under}))`);
      }
    }
    if (filter.from !== null) {
      const from = at(filter.from);
      where.push(`(m.from_agent = ${from} OR starts_with(m.from_agent, ${at(`${filter.from}/`)}) OR starts_with(m.from_agent, ${at(`${filter.from}-`)}))`);
    }
    if (filter.to !== null) {
      const to = at(filter.to);
      where.push(`(m.to_agent = ${to} OR m.addressed_to = ${to} OR m.to_group = ${to})`);
    }
    if (filter.thread !== null) where.push(`starts_with(m.thread_id, ${at(filter.thread)})`);
    if (filter.since !== null) where.push(`m.sent_at >= ${at(filter.since)}`);
    const rows = await this.read<PositionedMessage & { position: string }>(
      `SELECT s.seq AS position, ${SEARCHED_COLUMNS} FROM ${matches} JOIN messages m ON m.seq = s.seq
        WHERE ${where.join(' AND ')} ORDER BY s.seq DESC LIMIT $2`,
      params,
    );
    return rows.map((row) => ({ ...row, position: Number(row.position) }));
  }

  /**
   * Index what is not indexed yet, and again what an older agent-bus indexed otherwise (a row without
   * WORDS_INDEXED): at or after LATE_POSITIONS below the 'words' position, up to which every message
   * is indexed. An older agent-bus indexes only past its own mark ('messages' or 'parties'), which
   * this version moves too. A search that finds nothing to do writes nothing and takes no lock.
   */
  async indexForSearch(): Promise<void> {
    const due = await this.one<{ due: boolean }>(`SELECT EXISTS (SELECT 1 FROM messages m WHERE ${PENDING_FOR_SEARCH}) AS due`, [anyOf([WORDS_INDEXED])]);
    if (due?.due) await this.indexPending(true);
  }

  keepSearchIndexCurrent(): void {
    this.indexingAfterSends = true;
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
      for (;;) {
        this.indexAgain = false;
        const round = await this.indexPending(false);
        // A round that indexed something has one more after it, which moves the marks past what it indexed.
        if ((!this.indexAgain && (round === null || round.indexed === 0)) || this.closed) return;
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
  private async indexPending(wait: boolean): Promise<{ indexed: number; settled: boolean } | null> {
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
  private async indexRound(wait: boolean): Promise<{ indexed: number; settled: boolean } | null> {
    const lock: [number, string] = [LOCK.searchIndex, 'message_search'];
    return this.transaction(
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

  async recentMessages(limit: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    return this.read<MessageRecord>(`SELECT * FROM (SELECT ${MESSAGE_COLUMNS}, seq FROM messages ORDER BY seq DESC LIMIT $1) x ORDER BY seq`, [limit]).then(
      (rows) => rows.map(({ seq: _seq, ...message }: MessageRecord & { seq?: string }) => message),
    );
  }

  async lastPosition(): Promise<number> {
    return Number((await this.one<{ position: string | null }>('SELECT MAX(seq) AS position FROM messages'))?.position ?? 0);
  }

  async messagesByPosition(after: number, also: number[], limit: number): Promise<PositionedMessage[]> {
    if (limit <= 0) return [];
    const rows = await this.read<PositionedMessage & { position: string }>(
      `SELECT seq AS position, ${MESSAGE_COLUMNS} FROM messages WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq LIMIT $3`,
      [after, also, limit],
    );
    return rows.map((row) => ({ ...row, position: Number(row.position) }));
  }

  async fanoutCopies(fanoutId: string, repo: string): Promise<Array<FanoutCopy & { leased: boolean }>> {
    return this.read<FanoutCopy & { leased: boolean }>(
      `SELECT message_id AS "messageId", fanout_id AS "fanoutId", to_agent AS "toAgent", claimed_by AS "claimedBy", read_at AS "readAt",
              lease_until IS NOT NULL AS leased
         FROM messages WHERE fanout_id = $1 AND to_group = $2 ORDER BY message_id`,
      [fanoutId, repo],
    );
  }

  // ---------------------------------------------------------------- sessions

  async sessionRows(clientAddress?: string): Promise<SessionRecord[]> {
    if (clientAddress === undefined) return this.read<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY started_at, server_pid`);
    return this.read<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [clientAddress]);
  }

  private keyParams(key: SessionKey): unknown[] {
    return [key.serverPid, key.serverStarted, key.clientAddress];
  }

  /** Give up an address (QUERIES.md): its unread mail to the client address, unless that holds a copy; its sent mail from it; its row gone. */
  private async giveUpWith(query: Query, name: string, clientAddress: string, group: string): Promise<AddressMove> {
    const moved =
      (
        await query(
          `UPDATE messages m SET to_agent = $2
            WHERE m.to_agent = $1 AND m.read_at IS NULL
              AND (m.fanout_id IS NULL OR NOT EXISTS (
                SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = $3 AND s.to_agent = $2))`,
          [name, clientAddress, group],
        )
      ).rowCount ?? 0;
    await query('UPDATE messages SET from_agent = $2 WHERE from_agent = $1 AND read_at IS NULL', [name, clientAddress]);
    await query('DELETE FROM agents WHERE name = $1', [name]);
    return { name, moved };
  }

  async claimSession<D extends ClaimDecision>(input: ClaimInput<D>): Promise<ClaimOutcome<D>> {
    return this.transaction(
      [
        [LOCK.client, input.clientAddress],
        [LOCK.inbox, input.repo],
      ],
      async (query) => {
        const rows = (await query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [input.clientAddress])).rows as SessionRecord[];
        const roster = (await query(this.repoRowsSql, this.repoParams(input.repo))).rows as AgentRecord[];
        const decision = input.decide(rows, roster);
        for (const key of [...decision.expire, ...decision.replace]) await query(`DELETE FROM sessions WHERE ${SESSION_KEY}`, this.keyParams(key));
        for (const key of decision.endCrashed) await query(`UPDATE sessions SET ended_at = $4 WHERE ${SESSION_KEY} AND ended_at IS NULL`, [...this.keyParams(key), input.now]);
        const givenUp: AddressMove[] = [];
        for (const name of decision.giveUp) givenUp.push(await this.giveUpWith(query, name, input.clientAddress, input.repo));
        const row = input.row;
        await query(
          `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key, boot_id, pid_ns, started_at, last_seen, ended_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)
           ON CONFLICT (server_pid, server_started, client_address) DO UPDATE SET name = excluded.name, repo_path = excluded.repo_path,
             lineage = excluded.lineage, session_key = excluded.session_key, boot_id = excluded.boot_id, pid_ns = excluded.pid_ns,
             started_at = excluded.started_at, last_seen = excluded.last_seen, ended_at = NULL`,
          [row.serverPid, row.serverStarted, decision.name, row.clientAddress, row.repoPath, row.lineage, row.sessionKey, row.bootId, row.pidNs, row.startedAt, row.lastSeen],
        );
        await this.registerWith(query, decision.registrations, input.now);
        return { decision, givenUp };
      },
    );
  }

  async endSession(
    key: SessionKey,
    repo: string,
    now: string,
    giveUp: (rows: SessionRecord[], own: SessionRecord) => boolean,
  ): Promise<{ name: string; move: AddressMove | null } | null> {
    return this.transaction(
      [
        [LOCK.client, key.clientAddress],
        [LOCK.inbox, repo],
      ],
      async (query) => {
        const rows = (await query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [key.clientAddress])).rows as SessionRecord[];
        const row = rows.find((candidate) => candidate.serverPid === key.serverPid && candidate.serverStarted === key.serverStarted);
        if (!row || row.endedAt !== null) return null;
        await query(`UPDATE sessions SET ended_at = $4, last_seen = $4 WHERE ${SESSION_KEY}`, [...this.keyParams(key), now]);
        const move = giveUp(rows, row) ? await this.giveUpWith(query, row.name, key.clientAddress, repo) : null;
        return { name: row.name, move };
      },
    );
  }

  async renameSession(input: RenameInput): Promise<{ from: string; moved: number }> {
    return this.transaction([[LOCK.client, input.key.clientAddress]], async (query) => {
      const rows = (await query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [input.key.clientAddress])).rows as SessionRecord[];
      const plan = input.plan(rows);
      const from = plan.from;
      for (const key of plan.takeOver) await query(`DELETE FROM sessions WHERE ${SESSION_KEY}`, this.keyParams(key));
      const oldTopic = ((await query('SELECT topic FROM agents WHERE name = $1', [from])).rows[0]?.topic as string | null | undefined) ?? null;
      await this.registerWith(query, plan.registrations, input.now);
      await query('UPDATE agents SET topic = COALESCE(topic, $1) WHERE name = $2', [oldTopic, input.to]);
      let moved = 0;
      if (plan.moveMail) {
        moved = (await query('UPDATE messages SET to_agent = $1 WHERE to_agent = $2 AND read_at IS NULL', [input.to, from])).rowCount ?? 0;
        await query('UPDATE messages SET from_agent = $1 WHERE from_agent = $2 AND read_at IS NULL', [input.to, from]);
        await query('DELETE FROM agents WHERE name = $1', [from]);
      }
      await query(`UPDATE sessions SET name = $4, last_seen = $5 WHERE ${SESSION_KEY}`, [...this.keyParams(input.key), input.to, input.now]);
      return { from, moved };
    });
  }

  async bindSessionKey(key: SessionKey, sessionKey: string): Promise<void> {
    await this.writeAlone(`UPDATE sessions SET session_key = $4 WHERE ${SESSION_KEY}`, [...this.keyParams(key), sessionKey]);
  }

  async touchSession(key: SessionKey, now: string): Promise<void> {
    await this.writeAlone(`UPDATE sessions SET last_seen = $4 WHERE ${SESSION_KEY} AND last_seen < $4`, [...this.keyParams(key), now]);
  }

  async route(threadId: string): Promise<ClientRoute | null> {
    return (await this.one<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE thread_id = $1`, [threadId])) ?? null;
  }

  async saveRoute(route: ClientRoute): Promise<void> {
    await this.writeAlone(
      `INSERT INTO client_routes (thread_id, agent, client, executable, client_pid, client_started, repo_path, updated_at, turn_state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (thread_id) DO UPDATE SET agent = excluded.agent, client = excluded.client, executable = excluded.executable,
         client_pid = excluded.client_pid, client_started = excluded.client_started, repo_path = excluded.repo_path,
         updated_at = excluded.updated_at, turn_state = COALESCE(excluded.turn_state, client_routes.turn_state),
         queued_at = CASE WHEN excluded.turn_state = 'busy' THEN NULL ELSE client_routes.queued_at END`,
      [route.threadId, route.agent, route.client, route.executable, route.clientPid, route.clientStarted, route.repoPath, route.updatedAt, route.turnState ?? null],
    );
  }

  async routes(agent?: string): Promise<ClientRoute[]> {
    if (agent === undefined) return this.read<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes ORDER BY updated_at, thread_id`);
    return this.read<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE agent = $1 ORDER BY updated_at, thread_id`, [agent]);
  }

  async markQueued(threadId: string, now: string): Promise<boolean> {
    return (await this.writeAlone("UPDATE client_routes SET queued_at = $1 WHERE thread_id = $2 AND turn_state = 'idle' AND queued_at IS NULL", [now, threadId])) > 0;
  }

  async tick(session: string, counter: string, now: string): Promise<number> {
    // One statement, one round trip: the brain counts every tool call of every agent.
    const row = await this.one<{ value: number }>(
      `INSERT INTO session_counters (session, counter, value, updated_at) VALUES ($1, $2, 1, $3)
       ON CONFLICT (session, counter) DO UPDATE SET value = session_counters.value + 1, updated_at = excluded.updated_at
       RETURNING value`,
      [session, counter, now],
    );
    return row?.value ?? 1;
  }


  // ----------------------------------------------------------------- notices

  private async insertNotice(query: Query, notice: NoticeRecord): Promise<void> {
    await query(
      `INSERT INTO notices (notice_id, channel, severity, title, body, source, priority, content_hash, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [notice.noticeId, notice.channel, notice.severity, notice.title, notice.body, notice.source, notice.priority, notice.contentHash, notice.createdAt, notice.expiresAt],
    );
  }

  private async deleteNotices(query: Query, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await query('DELETE FROM notice_receipts WHERE notice_id = ANY($1::text[])', [ids]);
    await query('DELETE FROM notices WHERE notice_id = ANY($1::text[])', [ids]);
  }

  async publishNotice(input: PublishNoticeInput): Promise<{ evicted: NoticeRecord[]; expired: NoticeRecord[] }> {
    return this.transaction([[LOCK.channel, input.notice.channel ?? '']], async (query) => {
      const expired = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.expires_at <= $1 ORDER BY n.created_at, n.notice_id`, [input.expireBefore])).rows as NoticeRecord[];
      await this.deleteNotices(query, expired.map((notice) => notice.noticeId));
      await this.insertNotice(query, input.notice);
      const live = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS NOT DISTINCT FROM $1 ORDER BY n.created_at, n.notice_id`, [input.notice.channel])).rows as NoticeRecord[];
      const evicted = input.evict(live);
      await this.deleteNotices(query, evicted.map((notice) => notice.noticeId));
      return { evicted, expired };
    });
  }

  /** The due query (QUERIES.md): $1 session, $2 now, then the channels and the ids also due, when the query needs them. */
  private dueFrom(query: DueNoticesQuery): { sql: string; params: unknown[] } {
    const params: unknown[] = [query.session, query.now];
    const criticalOnly = isCriticalOnly(query);
    let severity = 'TRUE';
    if (criticalOnly && (query.alsoIds?.length ?? 0) > 0) {
      params.push(query.alsoIds);
      severity = `(n.severity = 'critical' OR n.notice_id = ANY($${params.length}::text[]))`;
    } else if (criticalOnly) severity = "n.severity = 'critical'";
    const live = `n.expires_at > $2 AND ${severity}`;
    let candidates = `SELECT n.* FROM notices n WHERE ${live}`;
    if (!query.all) {
      params.push(query.channels);
      candidates = `SELECT n.* FROM notices n WHERE n.channel IS NULL AND ${live}
         UNION ALL
         SELECT n.* FROM notices n WHERE n.channel = ANY($${params.length}::text[]) AND ${live}`;
    }
    return {
      sql: `FROM (${candidates}) n
        LEFT JOIN notice_receipts r ON r.notice_id = n.notice_id AND r.session = $1
        WHERE r.acknowledged_at IS NULL AND NOT (n.severity = 'info' AND r.delivered_at IS NOT NULL)`,
      params,
    };
  }

  async anyNoticeDue(query: DueNoticesQuery): Promise<boolean> {
    const from = this.dueFrom(query);
    return (await this.read(`SELECT 1 ${from.sql} LIMIT 1`, from.params)).length > 0;
  }

  async deliverNotices<S extends NoticeDecision>(input: DeliverNoticesInput<S>): Promise<S> {
    const { query: due } = input;
    const from = this.dueFrom(due);
    // Most hooks find nothing due: one statement (a transaction of its own) says so, and decides.
    const counts = await this.read<{ severity: Severity; n: number }>(`SELECT n.severity, COUNT(*)::int AS n ${from.sql} GROUP BY n.severity`, from.params);
    if (counts.length === 0) return input.decide([], { critical: 0, alert: 0, info: 0 });
    return this.transaction(
      [[LOCK.notices, due.session]],
      async (query) => {
        const totalDue: Record<Severity, number> = { critical: 0, alert: 0, info: 0 };
        const counts = (await query(`SELECT n.severity, COUNT(*)::int AS n ${from.sql} GROUP BY n.severity`, from.params)).rows as Array<{ severity: Severity; n: number }>;
        for (const { severity, n } of counts) totalDue[severity] = n;
        const limit = input.readLimit(totalDue);
        const rows =
          limit > 0 && totalDue.critical + totalDue.alert + totalDue.info > 0
            ? ((
                await query(
                  `SELECT ${NOTICE_COLUMNS}, r.delivered_at AS "deliveredAt" ${from.sql}
                   ORDER BY ${SEVERITY_RANK}, n.priority DESC, n.created_at, n.notice_id LIMIT $${from.params.length + 1}`,
                  [...from.params, limit],
                )
              ).rows as NoticeCandidate[])
            : [];
        const selection = input.decide(rows, totalDue);
        if (selection.receipts.length > 0) {
          await query(
            `INSERT INTO notice_receipts (notice_id, session, delivered_at) SELECT id, $2, $3 FROM unnest($1::text[]) AS r(id)
             ON CONFLICT (notice_id, session) DO UPDATE SET delivered_at = COALESCE(notice_receipts.delivered_at, excluded.delivered_at)`,
            [selection.receipts, due.session, due.now],
          );
        }
        return selection;
      },
      false,
    );
  }

  async notices(filter: NoticeFilter): Promise<NoticeListing[]> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (!filter.includeExpired) {
      params.push(filter.now);
      conditions.push(`n.expires_at > $${params.length}`);
    }
    if (filter.channel !== undefined) {
      params.push(filter.channel);
      conditions.push(`n.channel IS NOT DISTINCT FROM $${params.length}`);
    }
    return this.read<NoticeListing>(
      `SELECT ${NOTICE_COLUMNS},
         (SELECT COUNT(*)::int FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.delivered_at IS NOT NULL) AS "deliveredTo",
         (SELECT COUNT(*)::int FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.acknowledged_at IS NOT NULL) AS "acknowledgedBy"
       FROM notices n ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
       ORDER BY n.channel IS NOT NULL, n.channel, ${SEVERITY_RANK}, n.priority DESC, n.created_at`,
      params,
    );
  }

  async channelCounts(now: string): Promise<ChannelCount[]> {
    return this.read<ChannelCount>(
      `SELECT n.channel, COUNT(*)::int AS total, (COUNT(*) FILTER (WHERE n.severity = 'critical'))::int AS critical,
              (COUNT(*) FILTER (WHERE n.severity = 'alert'))::int AS alert, (COUNT(*) FILTER (WHERE n.severity = 'info'))::int AS info,
              MAX(n.expires_at) AS "lastExpiry"
         FROM notices n WHERE n.expires_at > $1 GROUP BY n.channel ORDER BY n.channel IS NOT NULL, n.channel`,
      [now],
    );
  }

  async acknowledgeNotice(noticeId: string, session: string, now: string): Promise<NoticeRecord | null> {
    return this.transaction([[LOCK.notices, session]], async (query) => {
      const notice = ((await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = $1`, [noticeId])).rows[0] as NoticeRecord | undefined) ?? null;
      if (notice === null) return null;
      await query(
        `INSERT INTO notice_receipts (notice_id, session, acknowledged_at) VALUES ($1, $2, $3)
         ON CONFLICT (notice_id, session) DO UPDATE SET acknowledged_at = COALESCE(notice_receipts.acknowledged_at, excluded.acknowledged_at)`,
        [noticeId, session, now],
      );
      return notice;
    });
  }

  async clearNotices(target: NoticeClearTarget): Promise<NoticeRecord[]> {
    return this.transaction([], async (query) => {
      let removed: NoticeRecord[];
      if (target.kind === 'id') removed = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = $1`, [target.noticeId])).rows as NoticeRecord[];
      else if (target.kind === 'channel') {
        removed = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS NOT DISTINCT FROM $1 ORDER BY n.created_at, n.notice_id`, [target.channel])).rows as NoticeRecord[];
      } else removed = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n ORDER BY n.created_at, n.notice_id`)).rows as NoticeRecord[];
      await this.deleteNotices(query, removed.map((notice) => notice.noticeId));
      return removed;
    });
  }

  // ------------------------------------------------------------------- brain

  async reconcileChannel(input: ReconcileInput): Promise<ReconcileOutcome> {
    return this.transaction([[LOCK.channel, input.channel]], async (query) => {
      const current = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS NOT DISTINCT FROM $1 ORDER BY n.created_at, n.notice_id`, [input.channel]))
        .rows as NoticeRecord[];
      const plan = input.plan(current);
      for (const { noticeId, priority } of plan.reprioritize) await query('UPDATE notices SET priority = $1 WHERE notice_id = $2', [priority, noticeId]);
      for (const notice of plan.added) await this.insertNotice(query, notice);
      await this.deleteNotices(query, plan.removed.map((notice) => notice.noticeId));
      await this.writeBrainState(query, input.state);
      return { kept: plan.kept, added: plan.added, removed: plan.removed };
    });
  }

  private async writeBrainState(query: Query, state: BrainState): Promise<void> {
    await query(
      `INSERT INTO brain_state (channel, source_kind, location, content_hash, entry_count, cut_by_cap, warnings, last_fetch_at, last_ok_at, last_error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (channel) DO UPDATE SET source_kind = excluded.source_kind, location = excluded.location,
         content_hash = excluded.content_hash, entry_count = excluded.entry_count, cut_by_cap = excluded.cut_by_cap,
         warnings = excluded.warnings, last_fetch_at = excluded.last_fetch_at, last_ok_at = excluded.last_ok_at, last_error = excluded.last_error`,
      [state.channel, state.sourceKind, state.location, state.contentHash, state.entryCount, state.cutByCap, state.warnings, state.lastFetchAt, state.lastOkAt, state.lastError],
    );
  }

  async recordBrainState(state: BrainState): Promise<void> {
    await this.transaction([[LOCK.channel, state.channel]], (query) => this.writeBrainState(query, state));
  }

  async brainState(channel: string): Promise<BrainState | null> {
    return (await this.one<BrainState>(`SELECT ${BRAIN_COLUMNS} FROM brain_state WHERE channel = $1`, [channel])) ?? null;
  }

  async takeMarker(key: string, session: string, now: string): Promise<boolean> {
    return (await this.writeAlone('INSERT INTO brain_markers (marker_key, session, taken_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [key, session, now], false)) > 0;
  }

  // -------------------------------------------------------------------- wake

  async takeWake(agent: string, now: string, since: string, allow: (recent: number) => boolean): Promise<boolean> {
    return this.transaction(
      [[LOCK.wakes, agent]],
      async (query) => {
        await query('DELETE FROM wakes WHERE woken_at < $1', [since]);
        const recent = ((await query('SELECT COUNT(*)::int AS n FROM wakes WHERE agent = $1', [agent])).rows[0]?.n as number | undefined) ?? 0;
        if (!allow(recent)) return false;
        await query('INSERT INTO wakes (agent, woken_at) VALUES ($1, $2)', [agent, now]);
        return true;
      },
      false,
    );
  }

  async claimWatch(session: string, token: string, pid: number, now: string, agent: string): Promise<void> {
    await this.transaction(
      [],
      (query) =>
        query(
          `INSERT INTO watchers (session, token, pid, started_at, agent) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent`,
          [session, token, pid, now, agent],
        ),
      false,
    );
  }

  async watchers(): Promise<Array<{ agent: string; pid: number }>> {
    return this.read<{ agent: string; pid: number }>('SELECT agent, pid FROM watchers WHERE agent IS NOT NULL ORDER BY session');
  }

  async holdsWatch(session: string, token: string): Promise<boolean> {
    return (await this.one<{ token: string }>('SELECT token FROM watchers WHERE session = $1', [session]))?.token === token;
  }

  async releaseWatch(session: string, token: string): Promise<void> {
    await this.writeAlone('DELETE FROM watchers WHERE session = $1 AND token = $2', [session, token], false);
  }

  // ------------------------------------------------------------------ tokens

  async createToken(token: TokenRecord, register: Registration[]): Promise<void> {
    await this.transaction([], async (query) => {
      await this.registerWith(query, register, token.createdAt);
      await query(
        `INSERT INTO tokens (token_id, agent, repo_path, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [token.tokenId, token.agent, token.repoPath, token.secretHash, token.scopes, token.createdAt, token.expiresAt, token.lastUsedAt, token.revokedAt],
      );
    });
  }

  async tokenById(tokenId: string): Promise<TokenRecord | null> {
    return (await this.one<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE token_id = $1`, [tokenId])) ?? null;
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.read<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at, token_id`);
  }

  async revokeTokens(idOrAgent: string, now: string): Promise<string[]> {
    const rows = await this.read<{ tokenId: string }>(
      `WITH revoked AS (
         UPDATE tokens SET revoked_at = $2 WHERE (token_id = $1 OR agent = $1) AND revoked_at IS NULL RETURNING token_id
       ) SELECT token_id AS "tokenId" FROM revoked ORDER BY token_id`,
      [idOrAgent, now],
    );
    return rows.map((row) => row.tokenId);
  }

  async noteTokenUse(tokenId: string, now: string, unlessSince: string): Promise<void> {
    await this.writeAlone('UPDATE tokens SET last_used_at = $2 WHERE token_id = $1 AND (last_used_at IS NULL OR last_used_at < $3)', [tokenId, now, unlessSince], false);
  }

  // -------------------------------------------------------------------- copy

  async *exportRows(table: TableModel, batch: number): AsyncGenerator<TableRow[]> {
    // Messages in the order they were written (seq); every other table in its key's order.
    const key = table.name === 'messages' ? ['seq'] : table.key;
    const columns = table.name === 'messages' ? [...table.columns, 'seq'] : table.columns;
    let after: unknown[] | null = null;
    for (;;) {
      const params: unknown[] = after === null ? [] : [...after];
      const where = after === null ? '' : `WHERE (${key.join(', ')}) > (${key.map((_, index) => `$${index + 1}`).join(', ')})`;
      params.push(batch);
      const rows = await this.read<TableRow>(`SELECT ${columns.join(', ')} FROM ${table.name} ${where} ORDER BY ${key.join(', ')} LIMIT $${params.length}`, params);
      if (rows.length === 0) return;
      const last = rows[rows.length - 1] as TableRow;
      after = key.map((column) => last[column]);
      if (table.name === 'messages') for (const row of rows) delete row.seq;
      yield rows;
      if (rows.length < batch) return;
    }
  }

  async importRows(table: TableModel, rows: TableRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.transaction([], async (query) => {
      // A statement per few hundred rows keeps under the protocol's 65,535 parameters.
      const perStatement = Math.max(1, Math.floor(30_000 / table.columns.length));
      for (let start = 0; start < rows.length; start += perStatement) {
        const slice = rows.slice(start, start + perStatement);
        const params: unknown[] = [];
        const values = slice.map((row) => `(${table.columns.map((column) => {
          params.push(row[column] ?? null);
          return `$${params.length}`;
        }).join(', ')})`);
        await query(`INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES ${values.join(', ')}`, params);
      }
    });
  }

  async countRows(table: TableModel): Promise<number> {
    return (await this.one<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table.name}`))?.n ?? 0;
  }

  // ----------------------------------------------------------------- changes

  changes(): ChangeFeed {
    return postgresChangeFeed(connectionConfig(this.url, this.options));
  }

  // ------------------------------------------------------------ maintenance

  async prune(input: PruneInput): Promise<PruneCounts> {
    return this.transaction(
      [],
      async (query) => {
        const count = async (sql: string, params: unknown[]): Promise<number> => ((await query(sql, params)).rows[0]?.n as number | undefined) ?? 0;
        // Threads wholly read and wholly older: a reply sent meanwhile (unread, newer) is never among them.
        const threads = (
          await query(
            'SELECT thread_id FROM messages GROUP BY thread_id HAVING MAX(sent_at) < $1 AND COUNT(*) FILTER (WHERE read_at IS NULL) = 0',
            [input.mailBefore],
          )
        ).rows.map((row) => row.thread_id as string);
        const inThreads = 'thread_id = ANY($1::text[]) AND read_at IS NOT NULL AND sent_at < $2';
        const threadParams = [threads, input.mailBefore];
        const orphanReceipts = 'notice_id IN (SELECT notice_id FROM notices WHERE expires_at <= $1) OR NOT EXISTS (SELECT 1 FROM notices n WHERE n.notice_id = notice_receipts.notice_id)';
        const endedSessions = 'ended_at IS NOT NULL AND ended_at < $1';
        if (input.dryRun) {
          return {
            threads: threads.length,
            messages: await count(`SELECT COUNT(*)::int AS n FROM messages WHERE ${inThreads}`, threadParams),
            notices: await count('SELECT COUNT(*)::int AS n FROM notices WHERE expires_at <= $1', [input.now]),
            receipts: await count(`SELECT COUNT(*)::int AS n FROM notice_receipts WHERE ${orphanReceipts}`, [input.now]),
            sessions: await count(`SELECT COUNT(*)::int AS n FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore]),
          };
        }
        const messages = (await query(`DELETE FROM messages WHERE ${inThreads}`, threadParams)).rowCount ?? 0;
        // The index keeps no key to messages (schema step 18): its rows for mail gone go too, and any an
        // indexer wrote for a message deleted under it.
        if (messages > 0) await query('DELETE FROM message_search s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.seq = s.seq)');
        const receipts = (await query(`DELETE FROM notice_receipts WHERE ${orphanReceipts}`, [input.now])).rowCount ?? 0;
        const notices = (await query('DELETE FROM notices WHERE expires_at <= $1', [input.now])).rowCount ?? 0;
        const sessions = (await query(`DELETE FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore])).rowCount ?? 0;
        return { messages, threads: threads.length, notices, receipts, sessions };
      },
      !input.dryRun,
    );
  }

  /** Plain deletes leave dead rows that autovacuum reclaims on its own. */
  async reclaimSpace(): Promise<null> {
    return null;
  }

  async claimMaintenance(task: string, now: string, notSince: string): Promise<boolean> {
    return (
      (await this.writeAlone(
        `INSERT INTO maintenance (task, last_run_at) VALUES ($1, $2)
         ON CONFLICT (task) DO UPDATE SET last_run_at = excluded.last_run_at WHERE maintenance.last_run_at < $3`,
        [task, now, notSince],
        false,
      )) > 0
    );
  }

  /**
   * PostgreSQL keeps its own pages whole; what a quick check can tell is that every table of
   * the model is there and readable.
   */
  async integrity(): Promise<StoreIntegrity> {
    const version = (await this.one<{ version: number }>('SELECT version FROM agent_bus_schema'))?.version ?? 0;
    const problems: string[] = [];
    for (const table of TABLES) {
      try {
        await this.read(`SELECT 1 FROM ${table.name} LIMIT 1`);
      } catch (error) {
        problems.push(`table ${table.name}: ${(error as Error).message}`);
      }
    }
    return { engine: 'postgres', schemaVersion: version, targetVersion: TARGET_VERSION, problems };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.endIndexPause?.();
    await this.backgroundIndexing;
    await this.pool.end().catch(() => undefined);
  }
}
