/**
 * The embedded SQLite backend: one connection per process, statements
 * prepared once, every read-modify-write in a `BEGIN IMMEDIATE` transaction.
 */
import { sqliteChangeFeed } from './changes.js';
import { openSqlite } from './open.js';
import type { Params, RawSqlite, SqliteConnection } from './driver.js';
import { TARGET_VERSION } from './schema.js';
import { plannedMessages } from '../rows.js';
import type { TableModel, TableRow } from '../tables.js';
import type {
  AgentRecord,
  ForgetOutcome,
  MessageRecord,
  FanoutCopy,
  InboxDecision,
  InboxQuery,
  InboxTake,
  ReadOutcome,
  TakeOutcome,
  ShownTake,
  HeldTake,
  ReaderIdentity,
  Registration,
  RosterQuery,
  RosterSnapshot,
  OrphanMail,
  SendInput,
  SendPlan,
  Store,
  ClaimDecision,
  ClaimInput,
  ClientRoute,
  ClaimOutcome,
  AddressMove,
  RenameInput,
  SessionKey,
  SessionRecord,
  ChangeFeed,
  ChannelCount,
  DeliverNoticesInput,
  NoticeDecision,
  DueNoticesQuery,
  NoticeClearTarget,
  NoticeFilter,
  NoticeListing,
  PublishNoticeInput,
  BrainState,
  ReconcileInput,
  ReconcileOutcome,
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
import { readRecord, type ReceiptRecord, type ReceiptWay } from '../../model/receipts.js';
import { partiesVisibleTo, type SearchFilter, type SearchTerm } from '../../model/search.js';

/**
 * After its body, the search index holds each message's parties (model/search.ts), each as one token
 * no query can spell: a private-use character (a query's words are letters and digits), then the
 * party's UTF-8 in hex (which the tokenizer keeps whole, and folds to lower case).
 */
const PARTY_MARK = 0xe000;

function partyToken(party: string): string {
  return `${String.fromCodePoint(PARTY_MARK)}${Buffer.from(party, 'utf8').toString('hex')}`;
}

/** model/search.ts partyOf, in SQL. */
function partySql(name: string): string {
  return `CASE WHEN instr(${name}, '/') > 0 THEN substr(${name}, 1, instr(${name}, '/') - 1) ELSE ${name} END`;
}

function partyTokenSql(party: string): string {
  return `char(${PARTY_MARK}) || hex(${party})`;
}

/** What the search index reads of a message (messages' columns): its body, then its parties. */
/** Messages indexed in one transaction, at most. */
const INDEX_BATCH = 20_000;
const INDEXED_TEXT = `body || ' ' || ${partyTokenSql(partySql('from_agent'))} || ' ' || ${partyTokenSql(partySql('to_agent'))}
  || CASE WHEN to_group IS NULL THEN '' ELSE ' ' || ${partyTokenSql('to_group')} END`;

/**
 * A prefix is asked of the index as the words it starts, when they are this many at most. FTS5 answers
 * a prefix by merging the row lists of all its words before it returns the first row, so a prefix of
 * common words costs a read of every row they are in; their OR is read newest first, as far as needed.
 */
const MAX_PREFIX_WORDS = 32;

/** The index's vocabulary (one row per occurrence), for finding the words a prefix starts. */
const SEARCH_WORDS = 'temp.message_search_words';
import type { NoticeCandidate, NoticeRecord, Severity } from '../../model/notices.js';

const AGENT_COLUMNS = `name, repo_path AS repoPath, registered_at AS registeredAt, last_seen AS lastSeen,
  group_name AS groupName, client, topic`;

/** A message's columns read through the search index (messages as m). */
const SEARCHED_COLUMNS = `m.message_id AS messageId, m.from_agent AS fromAgent, m.to_agent AS toAgent, m.body,
  m.thread_id AS threadId, m.sent_at AS sentAt, m.read_at AS readAt, m.delivered_at AS deliveredAt,
  m.addressed_to AS addressedTo, m.fanout_id AS fanoutId, m.to_group AS toGroup, m.claimed_by AS claimedBy,
  m.delivered_via AS deliveredVia, m.read_via AS readVia`;

const MESSAGE_COLUMNS = `message_id AS messageId, from_agent AS fromAgent, to_agent AS toAgent, body,
  thread_id AS threadId, sent_at AS sentAt, read_at AS readAt, delivered_at AS deliveredAt,
  addressed_to AS addressedTo, fanout_id AS fanoutId, to_group AS toGroup, claimed_by AS claimedBy,
  delivered_via AS deliveredVia, read_via AS readVia`;

/** Mark a copy (@id) read at @now by @via, and delivered where it was not yet (a first delivery keeps its time and way). */
const MARK_READ = `UPDATE messages SET read_at = @now, read_via = @via,
    delivered_via = CASE WHEN delivered_at IS NULL THEN @via ELSE delivered_via END, delivered_at = COALESCE(delivered_at, @now)
  WHERE message_id = @id AND read_at IS NULL`;

/** A copy's receipt: the message without its body. */
const RECEIPT_COLUMNS = `message_id AS messageId, fanout_id AS fanoutId, from_agent AS fromAgent, to_agent AS toAgent,
  addressed_to AS addressedTo, thread_id AS threadId, sent_at AS sentAt, claimed_by AS claimedBy,
  delivered_at AS deliveredAt, delivered_via AS deliveredVia, read_at AS readAt, read_via AS readVia`;

// A fan-out copy is skipped when the reader already holds its own copy of that send,
// and a bare-repo copy also when the address the reader shares holds one. Every copy
// is filed under its recipient's repo, so the lookup stays within the reader's repo.
const NO_OWN_COPY = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = @myGroup AND s.to_agent = @me))`;
const NO_OWN_OR_SHARED_COPY = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s
     WHERE s.fanout_id = m.fanout_id AND s.to_group = @myGroup AND s.to_agent IN (@me, @sharedOrMe)))`;

// What a reader may drain: its own mail; for a session, mail at its client address
// that it did not send itself; and mail to its bare repo name while nobody holds
// that name (left by a rename or by an older agent-bus that could not fan out).
// Mail a hook is showing right now (its lease has not run out) is nobody else's to take.
const NOT_LEASED = '(m.lease_until IS NULL OR m.lease_until < @now)';

const INBOX_UNION = `
  SELECT ${MESSAGE_COLUMNS} FROM messages m WHERE m.to_agent = @me AND m.read_at IS NULL AND ${NOT_LEASED}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS} FROM messages m
   WHERE m.to_agent = @shared AND m.read_at IS NULL AND ${NOT_LEASED} AND m.from_agent != @me AND ${NO_OWN_COPY}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS} FROM messages m
   WHERE m.to_agent = @group AND m.read_at IS NULL AND ${NOT_LEASED}
     AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.name = @group) AND ${NO_OWN_OR_SHARED_COPY}`;

const SESSION_COLUMNS = `server_pid AS serverPid, server_started AS serverStarted, name, client_address AS clientAddress,
  repo_path AS repoPath, lineage, session_key AS sessionKey, boot_id AS bootId, pid_ns AS pidNs,
  started_at AS startedAt, last_seen AS lastSeen, ended_at AS endedAt`;

const SESSION_KEY = 'server_pid = @serverPid AND server_started = @serverStarted AND client_address = @clientAddress';


const ROUTE_COLUMNS = `thread_id AS threadId, agent, client, executable, client_pid AS clientPid, client_started AS clientStarted,
  repo_path AS repoPath, updated_at AS updatedAt, turn_state AS turnState, queued_at AS queuedAt`;

const NOTICE_COLUMNS = `n.notice_id AS noticeId, n.channel, n.severity, n.title, n.body, n.source, n.priority,
  n.content_hash AS contentHash, n.created_at AS createdAt, n.expires_at AS expiresAt`;

const SEVERITY_RANK = `CASE n.severity WHEN 'critical' THEN 0 WHEN 'alert' THEN 1 ELSE 2 END`;

// What is due for one session: live, on a channel it receives (or global), not acknowledged
// by it, and for info only while it has not been shown them. Candidates are read channel by
// channel through the channel index (a channel holds a few dozen notices, the store maybe
// thousands); before a tool call, with every channel, only criticals, through the severity index.
/** The pre-tool query: critical notices only. */
function isCriticalOnly(query: DueNoticesQuery): boolean {
  return query.severities.length === 1 && query.severities[0] === 'critical';
}

function dueWhere(criticalOnly: boolean, all: boolean, withAlso = false): string {
  const critical = withAlso ? "(n.severity = 'critical' OR n.notice_id IN (SELECT value FROM json_each(@also)))" : "n.severity = 'critical'";
  const severity = criticalOnly ? critical : '1';
  const live = `n.expires_at > @now AND ${severity}`;
  const candidates = all
    ? `SELECT * FROM notices n WHERE ${live}`
    : `SELECT n.* FROM notices n WHERE n.channel IS NULL AND ${live}
       UNION ALL
       SELECT n.* FROM json_each(@channels) c CROSS JOIN notices n ON n.channel = c.value WHERE ${live}`;
  return `FROM (${candidates}) n
    LEFT JOIN notice_receipts r ON r.notice_id = n.notice_id AND r.session = @session
    WHERE r.acknowledged_at IS NULL AND NOT (n.severity = 'info' AND r.delivered_at IS NOT NULL)`;
}

interface QueuedSend {
  input: SendInput;
  resolve(records: MessageRecord[]): void;
  reject(error: unknown): void;
}

/** Most sends one write transaction carries, so a burst never holds the lock for long. */
const MAX_SENDS_PER_COMMIT = 256;

/** A send its own plan refused (an unknown recipient): nothing of it was written. */
class PlanRefused extends Error {
  constructor(readonly reason: unknown) {
    super('send refused by its plan');
  }
}

const TOKEN_COLUMNS = `token_id AS tokenId, agent, repo_path AS repoPath, secret_hash AS secretHash, scopes, created_at AS createdAt, expires_at AS expiresAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

/** PRAGMA auto_vacuum's value for incremental vacuum. */
const INCREMENTAL_VACUUM = 2;

export class SqliteStore implements Store {
  private readonly db: SqliteConnection;
  private sendQueue: QueuedSend[] = [];
  /** Whether this connection has its view of the search index's vocabulary (SEARCH_WORDS). */
  private searchWordsOpen = false;
  /** One send as a savepoint, so a send that fails after writing undoes only itself. */
  private readonly sendOne: (input: SendInput) => MessageRecord[];

  constructor(
    readonly location: string,
    busyTimeoutMs?: number,
  ) {
    this.db = openSqlite(location, busyTimeoutMs);
    this.sendOne = this.db.savepoint((input: SendInput) => this.sendNow(input));
  }

  /** The underlying connection, for migrations tests and benchmarks that seed data. */
  get connection(): RawSqlite {
    return this.db.raw;
  }

  private all<T>(sql: string, params: Params = {}): T[] {
    return this.db.all<T>(sql, params);
  }

  private get<T>(sql: string, params: Params = {}): T | undefined {
    return this.db.get<T>(sql, params);
  }

  private run(sql: string, params: Params = {}): { changes: number } {
    return this.db.run(sql, params);
  }

  private immediate<T>(work: () => T): T {
    return this.db.immediate(work);
  }

  private readMostly<T>(work: () => T): T {
    return this.db.readMostly(work);
  }

  private registerNow(registrations: Registration[], now: string): void {
    for (const reg of registrations) {
      const params = { name: reg.name, repo: reg.repoPath, now, group: reg.groupName, client: reg.client };
      if (reg.authoritative) {
        this.run(
          `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client)
           VALUES (@name, @repo, @now, @now, @group, @client)
           ON CONFLICT(name) DO UPDATE SET repo_path = excluded.repo_path, last_seen = excluded.last_seen,
             group_name = excluded.group_name, client = excluded.client`,
          params,
        );
      } else {
        this.run(
          `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client)
           VALUES (@name, @repo, @now, @now, @group, @client)
           ON CONFLICT(name) DO UPDATE SET last_seen = excluded.last_seen,
             group_name = excluded.group_name, client = excluded.client`,
          params,
        );
      }
    }
  }

  async register(registrations: Registration[], now: string): Promise<void> {
    this.immediate(() => this.registerNow(registrations, now));
  }

  async touch(names: string[], now: string): Promise<void> {
    if (names.length === 0) return;
    this.immediate(() => {
      for (const name of names) this.run('UPDATE agents SET last_seen = @now WHERE name = @name', { name, now });
    });
  }

  async getAgent(name: string): Promise<AgentRecord | null> {
    return this.get<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = ?`, [name]) ?? null;
  }

  private repoRows(group: string): AgentRecord[] {
    // '0' follows '/': the range is every name that begins `group/`, through the primary key.
    return this.all<AgentRecord>(
      `SELECT ${AGENT_COLUMNS} FROM agents
        WHERE group_name = @group OR name = @group OR (group_name IS NULL AND name >= @from AND name < @to) ORDER BY name`,
      { group, from: `${group}/`, to: `${group}0` },
    );
  }

  async agentsOfRepo(group: string): Promise<AgentRecord[]> {
    return this.repoRows(group);
  }

  private candidates(query: RosterQuery): AgentRecord[] {
    switch (query.kind) {
      case 'all':
        return this.all<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`);
      case 'name':
        return this.all<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = ?`, [query.name]);
      case 'group':
        return this.repoRows(query.group);
    }
  }

  /**
   * Sends made in the same turn of the event loop share one write transaction (group commit): the
   * batch is written once the turn's I/O callbacks have run, so a hub's requests that arrived
   * together go together. Each send resolves only once that transaction has committed: a commit
   * costs far more here than the rows it writes. One send's failure never undoes another's: a send
   * that registers its speaker first runs as a savepoint; a send whose plan refuses it has written
   * nothing yet; any other failure (the disk, say) fails the whole batch.
   */
  send(input: SendInput): Promise<MessageRecord[]> {
    return new Promise((resolve, reject) => {
      this.sendQueue.push({ input, resolve, reject });
      if (this.sendQueue.length === 1) setImmediate(() => this.flushSends());
    });
  }

  private flushSends(): void {
    while (this.sendQueue.length > 0) {
      const batch = this.sendQueue.splice(0, MAX_SENDS_PER_COMMIT);
      const outcomes: Array<{ records: MessageRecord[] } | { error: unknown }> = [];
      try {
        this.immediate(() => {
          for (const { input } of batch) {
            try {
              outcomes.push({ records: input.register.length > 0 ? this.sendOne(input) : this.sendNow(input) });
            } catch (error) {
              if (error instanceof PlanRefused) outcomes.push({ error: error.reason });
              else if (input.register.length > 0) outcomes.push({ error });
              else throw error;
            }
          }
        });
      } catch (error) {
        for (const queued of batch) queued.reject(error);
        continue;
      }
      batch.forEach((queued, index) => {
        const outcome = outcomes[index];
        if (outcome && 'records' in outcome) queued.resolve(outcome.records);
        else queued.reject(outcome ? outcome.error : new Error('send outcome missing'));
      });
    }
  }

  private sendNow(input: SendInput): MessageRecord[] {
    this.registerNow(input.register, input.sentAt);
    let plan: SendPlan;
    try {
      plan = input.plan(this.candidates(input.roster));
    } catch (error) {
      throw new PlanRefused(error);
    }
    const records = plannedMessages(input, plan);
    for (const record of records) {
      this.run(
        `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [record.messageId, record.fromAgent, record.toAgent, record.body, record.threadId, record.sentAt, record.addressedTo, record.fanoutId, record.toGroup],
      );
    }
    return records;
  }

  private inboxParams(reader: ReaderIdentity, now: string): Params {
    const shared = reader.isSession ? reader.clientAddress : null;
    return {
      now,
      me: reader.name,
      myGroup: reader.group,
      shared,
      sharedOrMe: shared ?? reader.name,
      group: reader.group !== reader.name ? reader.group : null,
    };
  }

  private selectInbox(query: InboxQuery, limit = query.limit): MessageRecord[] {
    const filter = query.actionableOnly ? 'WHERE claimedBy IS NULL OR claimedBy = @me' : '';
    return this.all<MessageRecord>(
      `SELECT * FROM (${INBOX_UNION}) ${filter} ORDER BY sentAt, messageId LIMIT @limit`,
      { ...this.inboxParams(query.reader, query.now), limit },
    );
  }

  /** Every copy, in the reader's repo, of the fan-outs among `rows`. */
  private copiesOf(rows: MessageRecord[], group: string): FanoutCopy[] {
    const fanouts = [...new Set(rows.map((row) => row.fanoutId).filter((id): id is string => id !== null))];
    const copies: FanoutCopy[] = [];
    for (const fanout of fanouts) {
      copies.push(
        ...this.all<FanoutCopy>(
          `SELECT message_id AS messageId, fanout_id AS fanoutId, to_agent AS toAgent, claimed_by AS claimedBy, read_at AS readAt
             FROM messages WHERE fanout_id = ? AND to_group = ?`,
          [fanout, group],
        ),
      );
    }
    return copies;
  }

  /** Select, decide once, claim: the part of a read and a take that is the same. */
  private takeRows(input: InboxTake): InboxDecision {
    const rows = this.selectInbox(input.query);
    const decision = input.decide(rows, this.copiesOf(rows, input.query.reader.group));
    const { reader } = input.query;
    for (const fanout of decision.claims) {
      this.run('UPDATE messages SET claimed_by = @me WHERE fanout_id = @fanout AND to_group = @group AND claimed_by IS NULL', {
        me: reader.name,
        fanout,
        group: reader.group,
      });
    }
    return decision;
  }

  /** Mark rows read and delivered by `via`, and the copies their read settles read. */
  private markRead(ids: string[], settle: string[], now: string, via: ReceiptWay): void {
    for (const id of [...ids, ...settle]) this.run(MARK_READ, { now, via, id });
  }

  async peekInbox(query: InboxQuery): Promise<MessageRecord[]> {
    return query.limit <= 0 ? [] : this.selectInbox(query);
  }

  async readInbox(input: InboxTake & { via: ReceiptWay }): Promise<ReadOutcome> {
    const empty: ReadOutcome = { messages: [], decision: { rows: [], claims: [], contested: [], settle: [] } };
    // Most reads find nothing: answer those without taking the write lock.
    if (input.query.limit <= 0 || this.selectInbox(input.query, 1).length === 0) return empty;
    return this.immediate(() => {
      const decision = this.takeRows(input);
      const now = input.query.now;
      this.markRead(decision.rows.map((row) => row.messageId), decision.settle, now, input.via);
      const messages = decision.rows.map((row) => readRecord(row, now, input.via));
      return { messages, decision };
    });
  }

  async takeInbox(input: InboxTake & { lease: string }): Promise<TakeOutcome> {
    const empty: TakeOutcome = { messages: [], decision: { rows: [], claims: [], contested: [], settle: [] }, lease: input.lease };
    if (input.query.limit <= 0 || this.selectInbox(input.query, 1).length === 0) return empty;
    return this.immediate(() => {
      const decision = this.takeRows(input);
      for (const row of decision.rows) this.run('UPDATE messages SET lease_until = ? WHERE message_id = ?', [input.lease, row.messageId]);
      return { messages: decision.rows, decision, lease: input.lease };
    });
  }

  async releaseLeases(reader: ReaderIdentity, taken: HeldTake): Promise<void> {
    if (taken.messageIds.length === 0) return;
    const ids = JSON.stringify(taken.messageIds);
    this.immediate(() => {
      // Claims first: which fan-outs the take holds is read from its leased rows.
      for (const fanout of taken.claims) {
        this.run(
          `UPDATE messages SET claimed_by = NULL WHERE fanout_id = @fanout AND to_group = @group AND claimed_by = @me AND read_at IS NULL
             AND EXISTS (SELECT 1 FROM messages t WHERE t.message_id IN (SELECT value FROM json_each(@ids)) AND t.lease_until = @lease AND t.fanout_id = @fanout)`,
          { fanout, group: reader.group, me: reader.name, ids, lease: taken.lease },
        );
      }
      for (const id of taken.messageIds) this.run('UPDATE messages SET lease_until = NULL WHERE message_id = ? AND read_at IS NULL AND lease_until = ?', [id, taken.lease]);
    });
  }

  async markDelivered(shown: ShownTake, now: string, via: ReceiptWay): Promise<MessageRecord[]> {
    if (shown.messageIds.length === 0) return [];
    const { reader } = shown;
    const params = {
      now,
      via,
      lease: shown.lease,
      ids: JSON.stringify(shown.messageIds),
      me: reader.name,
      shared: reader.isSession ? reader.clientAddress : null,
      group: reader.group !== reader.name ? reader.group : null,
    };
    return this.immediate(() => {
      const marked = this.all<{ id: string }>(
        `SELECT message_id AS id FROM messages
          WHERE message_id IN (SELECT value FROM json_each(@ids)) AND read_at IS NULL AND lease_until = @lease AND to_agent IN (@me, @shared, @group)`,
        params,
      ).map((row) => row.id);
      if (marked.length === 0) return [];
      this.markRead(marked, [], now, via);
      for (const id of shown.settle) {
        this.run(
          `${MARK_READ} AND to_agent = @shared AND fanout_id IN (SELECT fanout_id FROM messages WHERE message_id IN (SELECT value FROM json_each(@marked)))`,
          { now, via, id, shared: params.shared, marked: JSON.stringify(marked) },
        );
      }
      return this.all<MessageRecord>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY sent_at, message_id`, [JSON.stringify(marked)]);
    });
  }

  async recordDelivered(messageIds: string[], now: string, via: ReceiptWay): Promise<string[]> {
    if (messageIds.length === 0) return [];
    // Most shows find every copy delivered already: answer those without taking the write lock.
    const pending = (ids: string[]): string[] =>
      this.all<{ id: string }>('SELECT message_id AS id FROM messages WHERE message_id IN (SELECT value FROM json_each(?)) AND delivered_at IS NULL', [JSON.stringify(ids)]).map((row) => row.id);
    if (pending(messageIds).length === 0) return [];
    return this.immediate(() => {
      const marked = pending(messageIds);
      for (const id of marked) this.run('UPDATE messages SET delivered_at = ?, delivered_via = ? WHERE message_id = ? AND delivered_at IS NULL', [now, via, id]);
      return marked;
    });
  }

  async receipts(id: string): Promise<ReceiptRecord[]> {
    const own = this.get<{ fanoutId: string | null }>('SELECT fanout_id AS fanoutId FROM messages WHERE message_id = ?', [id]);
    if (own !== undefined && own.fanoutId === null) return this.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE message_id = ?`, [id]);
    return this.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE fanout_id = ? ORDER BY to_agent, message_id`, [own?.fanoutId ?? id]);
  }

  async sendIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // Ranges rather than LIKE, so the key and the fan-out index answer whatever the prefix holds.
    return this.all<{ id: string }>(
      `SELECT DISTINCT COALESCE(fanout_id, message_id) AS id FROM messages WHERE message_id >= @from AND message_id < @to
       UNION SELECT fanout_id FROM messages WHERE fanout_id >= @from AND fanout_id < @to
       ORDER BY id LIMIT @limit`,
      { from: prefix, to: `${prefix}\u{10FFFF}`, limit },
    ).map((row) => row.id);
  }

  async pendingCount(reader: ReaderIdentity): Promise<number> {
    // Leased mail is still unread: count it, whatever its lease.
    const row = this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${INBOX_UNION})`, this.inboxParams(reader, '9999'));
    return row?.n ?? 0;
  }

  async roster(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[]): Promise<RosterSnapshot> {
    return this.db.deferred(() => {
      const agents = this.all<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`);
      const unread = this.all<{ toAgent: string; n: number }>(
        'SELECT to_agent AS toAgent, COUNT(*) AS n FROM messages WHERE read_at IS NULL GROUP BY to_agent ORDER BY to_agent',
      );
      const orphans: OrphanMail[] = [];
      const copyHolders = new Map<string, string[]>();
      for (const name of orphansOf(agents, unread.map((row) => row.toAgent))) {
        const rows = this.all<OrphanMail>(
          `SELECT to_agent AS toAgent, message_id AS messageId, fanout_id AS fanoutId FROM messages WHERE to_agent = ? AND read_at IS NULL ORDER BY message_id`,
          [name],
        );
        orphans.push(...rows);
        for (const { fanoutId } of rows) {
          if (fanoutId === null || copyHolders.has(fanoutId)) continue;
          copyHolders.set(fanoutId, this.all<{ toAgent: string }>('SELECT to_agent AS toAgent FROM messages WHERE fanout_id = ?', [fanoutId]).map((copy) => copy.toAgent));
        }
      }
      const sessionHolders = this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ended_at IS NULL`);
      return { agents, unread, orphans, copyHolders, sessionHolders };
    });
  }

  async forget(name: string): Promise<ForgetOutcome> {
    return this.immediate(() => {
      const removed = this.run('DELETE FROM agents WHERE name = ?', [name]).changes > 0;
      const row = this.get<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE to_agent = ? AND read_at IS NULL', [name]);
      return { removed, pending: row?.n ?? 0 };
    });
  }

  async removeAgents(names: string[]): Promise<string[]> {
    return this.immediate(() => names.filter((name) => this.run('DELETE FROM agents WHERE name = ?', [name]).changes > 0));
  }

  async thread(threadId: string, limit: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    return this.all<MessageRecord>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = ? ORDER BY sent_at, message_id LIMIT ?`,
      [threadId, limit],
    );
  }

  async threadIdsStartingWith(prefix: string, limit: number): Promise<string[]> {
    if (limit <= 0) return [];
    // A range rather than LIKE, so the thread index answers it whatever the prefix holds.
    const rows = this.all<{ thread_id: string }>(
      'SELECT DISTINCT thread_id FROM messages WHERE thread_id >= ? AND thread_id < ? ORDER BY thread_id LIMIT ?',
      [prefix, `${prefix}\u{10FFFF}`, limit],
    );
    return rows.map((row) => row.thread_id);
  }

  async glancesBefore(before: number | null, limit: number): Promise<MessageGlance[]> {
    if (limit <= 0) return [];
    return this.all<MessageGlance>(
      `SELECT rowid AS position, thread_id AS threadId, from_agent AS fromAgent, to_agent AS toAgent, addressed_to AS addressedTo,
         sent_at AS sentAt, substr(body, 1, ${GLANCE_CHARS}) AS preview
         FROM messages WHERE rowid < ? ORDER BY rowid DESC LIMIT ?`,
      [before ?? Number.MAX_SAFE_INTEGER, limit],
    );
  }

  async threadCounts(threadIds: string[]): Promise<ThreadCount[]> {
    if (threadIds.length === 0) return [];
    return this.all<ThreadCount>(
      `SELECT thread_id AS threadId, COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends, COUNT(*) AS copies,
         SUM(read_at IS NULL) AS unread, MIN(sent_at) AS firstSentAt, MAX(sent_at) AS lastSentAt, MAX(rowid) AS lastPosition
         FROM messages WHERE thread_id IN (SELECT value FROM json_each(?)) GROUP BY thread_id`,
      [JSON.stringify(threadIds)],
    );
  }

  async mailSince(since: string): Promise<MailWindow> {
    return this.readMostly(() => {
      // The newest message older than the window, read back from the newest: the window lies past it.
      const edge = this.get<{ position: number }>('SELECT rowid AS position FROM messages WHERE sent_at < ? ORDER BY rowid DESC LIMIT 1', [since])?.position ?? 0;
      const window = `FROM messages WHERE rowid > @edge AND sent_at >= @since`;
      const hours = this.all<{ hour: string; sends: number }>(
        `SELECT substr(sent_at, 1, 13) AS hour, COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends ${window} GROUP BY hour ORDER BY hour`,
        { edge, since },
      );
      const pairs = this.all<{ from: string; to: string; sends: number }>(
        `SELECT from_agent AS "from", COALESCE(addressed_to, to_agent) AS "to", COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends
           ${window} GROUP BY from_agent, COALESCE(addressed_to, to_agent) ORDER BY sends DESC, "from", "to" LIMIT ${MAIL_PAIRS}`,
        { edge, since },
      );
      return { hours, pairs };
    });
  }

  async searchMessages(terms: SearchTerm[], filter: SearchFilter, limit: number): Promise<PositionedMessage[]> {
    if (limit <= 0) return [];
    await this.indexForSearch();
    if (!this.searchWordsOpen) {
      this.db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_WORDS} USING fts5vocab(main, 'message_search', 'instance')`);
      this.searchWordsOpen = true;
    }
    // One snapshot: the words a prefix starts are those of the index the query then reads.
    return this.db.deferred(() => this.searchNow(terms, filter, limit));
  }

  private searchNow(terms: SearchTerm[], filter: SearchFilter, limit: number): PositionedMessage[] {
    const query = this.matchQuery(terms, filter);
    if (query === null) return [];
    const params: Params = { query, limit };
    const where = ['message_search MATCH @query'];
    if (filter.visibleTo !== null) {
      // The index found mail with one of the reader's parties; this is the rule itself.
      params.me = filter.visibleTo.name;
      if (filter.visibleTo.repo === null) where.push('(m.from_agent = @me OR m.to_agent = @me)');
      else {
        params.repo = filter.visibleTo.repo;
        params.repoPrefix = `${filter.visibleTo.repo}/`;
        where.push(`(m.from_agent = @me OR m.to_agent = @me OR m.to_group = @repo OR m.from_agent = @repo OR m.to_agent = @repo
          OR substr(m.from_agent, 1, length(@repoPrefix)) = @repoPrefix OR substr(m.to_agent, 1, length(@repoPrefix)) = @repoPrefix)`);
      }
    }
    if (filter.from !== null) {
      Object.assign(params, { from: filter.from, fromSlash: `${filter.from}/`, fromDash: `${filter.from}-` });
      where.push('(m.from_agent = @from OR substr(m.from_agent, 1, length(@fromSlash)) = @fromSlash OR substr(m.from_agent, 1, length(@fromDash)) = @fromDash)');
    }
    if (filter.to !== null) {
      params.to = filter.to;
      where.push('(m.to_agent = @to OR m.addressed_to = @to OR m.to_group = @to)');
    }
    if (filter.thread !== null) {
      params.thread = filter.thread;
      where.push('substr(m.thread_id, 1, length(@thread)) = @thread');
    }
    if (filter.since !== null) {
      params.since = filter.since;
      where.push('m.sent_at >= @since');
    }
    if (filter.before !== null) {
      params.before = filter.before;
      where.push('s.rowid < @before');
    }
    return this.all<PositionedMessage>(
      `SELECT s.rowid AS position, ${SEARCHED_COLUMNS} FROM message_search s JOIN messages m ON m.rowid = s.rowid
        WHERE ${where.join(' AND ')} ORDER BY s.rowid DESC LIMIT @limit`,
      params,
    );
  }

  /**
   * The FTS5 query, each part quoted so none is an operator: every term, and for a reader one of its
   * parties, so FTS5 walks the rows of both at once and a reader's search reads about as many rows as
   * the reader has mail, however common its words. Null when a prefix starts no indexed word.
   */
  private matchQuery(terms: SearchTerm[], filter: SearchFilter): string | null {
    const parts: string[] = [];
    for (const term of terms) {
      if (term.kind === 'word') parts.push(`"${term.word}"`);
      else if (term.kind === 'phrase') parts.push(`"${term.words.join(' ')}"`);
      else {
        const words = this.wordsStartingWith(term.word);
        if (words === null) parts.push(`"${term.word}"*`);
        else if (words.length === 0) return null;
        else parts.push(`(${words.map((word) => `"${word}"`).join(' OR ')})`);
      }
    }
    if (filter.visibleTo !== null) parts.push(`(${partiesVisibleTo(filter.visibleTo).map((party) => `"${partyToken(party)}"`).join(' OR ')})`);
    return parts.join(' AND ');
  }

  /**
   * The indexed words `prefix` starts, one seek into the vocabulary each (words are in byte order, so
   * those of a prefix are together); null when they are more than MAX_PREFIX_WORDS, or the prefix is
   * not ASCII (the tokenizer folds other letters by rules of its own, so only its prefix query is sure).
   */
  private wordsStartingWith(prefix: string): string[] | null {
    if (!/^[a-z0-9]+$/.test(prefix)) return null;
    const words: string[] = [];
    let from = prefix;
    for (;;) {
      const word = this.get<{ term: string }>(`SELECT term FROM ${SEARCH_WORDS} WHERE term >= ? LIMIT 1`, [from])?.term;
      if (word === undefined || !word.startsWith(prefix)) return words;
      if (words.length === MAX_PREFIX_WORDS) return null;
      words.push(word);
      // The least text after `word`: no indexed word holds a control character.
      from = `${word}\u0001`;
    }
  }

  /**
   * Index the mail stored since the index was last brought up to date, each message with its parties.
   * An older agent-bus indexes bodies alone and moves only the 'messages' position: what it indexed past
   * the 'parties' position is indexed again here. Writers take turns, so positions are taken in order.
   */
  /** Nothing: the index catches up at the next search cheaply, and a write beside the sends would hold their lock. */
  keepSearchIndexCurrent(): void {}

  async indexForSearch(): Promise<void> {
    // A batch a transaction: a bus whose mail is indexed all at once (after an upgrade) keeps its writers waiting
    // no longer than one batch takes.
    for (;;) {
      const newest = this.get<{ position: number | null }>('SELECT MAX(rowid) AS position FROM messages')?.position ?? 0;
      // What an older agent-bus indexed lies past 'parties' too.
      if (newest <= this.searchPositions().parties) return;
      this.immediate(() => {
        const { messages, parties } = this.searchPositions();
        if (messages > parties) {
          // Removing every row at once is the quick way when all of them lack their parties.
          if (parties === 0) this.run("INSERT INTO message_search (message_search) VALUES ('delete-all')");
          else this.run('DELETE FROM message_search WHERE rowid > ? AND rowid <= ?', [parties, messages]);
        }
        const upTo = Math.min(parties + INDEX_BATCH, this.get<{ position: number | null }>('SELECT MAX(rowid) AS position FROM messages')?.position ?? 0);
        this.run(`INSERT INTO message_search (rowid, body) SELECT rowid, ${INDEXED_TEXT} FROM messages WHERE rowid > ? AND rowid <= ?`, [parties, upTo]);
        this.run("INSERT OR REPLACE INTO search_index (name, position) SELECT name, ? FROM (SELECT 'messages' AS name UNION ALL SELECT 'parties')", [upTo]);
      });
    }
  }

  /** How far the index goes: 'messages' for bodies (any agent-bus), 'parties' for bodies with their parties. */
  private searchPositions(): { messages: number; parties: number } {
    const rows = this.all<{ name: string; position: number }>("SELECT name, position FROM search_index WHERE name IN ('messages', 'parties')");
    const at = (name: string): number => rows.find((row) => row.name === name)?.position ?? 0;
    return { messages: at('messages'), parties: at('parties') };
  }

  async recentMessages(limit: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    // Insertion order: the newest rows without an index on sent_at that every send would pay for.
    return this.all<MessageRecord>(
      `SELECT * FROM (SELECT ${MESSAGE_COLUMNS}, rowid AS seq FROM messages ORDER BY rowid DESC LIMIT ?) ORDER BY seq`,
      [limit],
    ).map(({ seq: _seq, ...message }: MessageRecord & { seq?: number }) => message);
  }

  async agentsAt(repoPath: string): Promise<AgentRecord[]> {
    return this.all<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE repo_path = ? ORDER BY name`, [repoPath]);
  }

  async setTopic(name: string, topic: string | null): Promise<void> {
    this.immediate(() => this.run('UPDATE agents SET topic = ? WHERE name = ?', [topic, name]));
  }

  async sessionRows(clientAddress?: string): Promise<SessionRecord[]> {
    if (clientAddress === undefined) return this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions`);
    return this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = ?`, [clientAddress]);
  }

  private keyParams(key: SessionKey): Params {
    return { serverPid: key.serverPid, serverStarted: key.serverStarted, clientAddress: key.clientAddress };
  }

  /**
   * Give up an address no running session holds: its unread mail moves to the
   * client address (unless that address already has its own copy of the same
   * fan-out), mail it sent and nobody read yet now comes from the client
   * address, and the name leaves the roster.
   */
  private giveUpAddress(name: string, clientAddress: string, group: string): AddressMove {
    const moved = this.run(
      `UPDATE messages SET to_agent = @shared
        WHERE to_agent = @name AND read_at IS NULL
          AND (fanout_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM messages s WHERE s.fanout_id = messages.fanout_id AND s.to_group = @group AND s.to_agent = @shared))`,
      { name, shared: clientAddress, group },
    ).changes;
    this.run('UPDATE messages SET from_agent = @shared WHERE from_agent = @name AND read_at IS NULL', { name, shared: clientAddress });
    this.run('DELETE FROM agents WHERE name = ?', [name]);
    return { name, moved };
  }

  async claimSession<D extends ClaimDecision>(input: ClaimInput<D>): Promise<ClaimOutcome<D>> {
    return this.immediate(() => {
      const rows = this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = ?`, [input.clientAddress]);
      const decision = input.decide(rows, this.repoRows(input.repo));
      for (const key of [...decision.expire, ...decision.replace]) this.run(`DELETE FROM sessions WHERE ${SESSION_KEY}`, this.keyParams(key));
      for (const key of decision.endCrashed) {
        this.run(`UPDATE sessions SET ended_at = @now WHERE ${SESSION_KEY} AND ended_at IS NULL`, { ...this.keyParams(key), now: input.now });
      }
      const givenUp = decision.giveUp.map((name) => this.giveUpAddress(name, input.clientAddress, input.repo));
      const row = input.row;
      this.run(
        `INSERT OR REPLACE INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key,
           boot_id, pid_ns, started_at, last_seen, ended_at)
         VALUES (@serverPid, @serverStarted, @name, @clientAddress, @repoPath, @lineage, @sessionKey, @bootId, @pidNs,
           @startedAt, @lastSeen, NULL)`,
        {
          serverPid: row.serverPid,
          serverStarted: row.serverStarted,
          name: decision.name,
          clientAddress: row.clientAddress,
          repoPath: row.repoPath,
          lineage: row.lineage,
          sessionKey: row.sessionKey,
          bootId: row.bootId,
          pidNs: row.pidNs,
          startedAt: row.startedAt,
          lastSeen: row.lastSeen,
        },
      );
      this.registerNow(decision.registrations, input.now);
      return { decision, givenUp };
    });
  }

  async endSession(
    key: SessionKey,
    repo: string,
    now: string,
    giveUp: (rows: SessionRecord[], own: SessionRecord) => boolean,
  ): Promise<{ name: string; move: AddressMove | null } | null> {
    return this.immediate(() => {
      const rows = this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = ?`, [key.clientAddress]);
      const row = rows.find((candidate) => candidate.serverPid === key.serverPid && candidate.serverStarted === key.serverStarted);
      if (!row || row.endedAt !== null) return null;
      this.run(`UPDATE sessions SET ended_at = @now, last_seen = @now WHERE ${SESSION_KEY}`, { ...this.keyParams(key), now });
      const move = giveUp(rows, row) ? this.giveUpAddress(row.name, key.clientAddress, repo) : null;
      return { name: row.name, move };
    });
  }

  async renameSession(input: RenameInput): Promise<{ from: string; moved: number }> {
    return this.immediate(() => {
      const rows = this.all<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = ?`, [input.key.clientAddress]);
      const plan = input.plan(rows);
      const from = plan.from;
      for (const key of plan.takeOver) this.run(`DELETE FROM sessions WHERE ${SESSION_KEY}`, this.keyParams(key));
      const oldTopic = this.get<{ topic: string | null }>('SELECT topic FROM agents WHERE name = ?', [from])?.topic ?? null;
      this.registerNow(plan.registrations, input.now);
      this.run('UPDATE agents SET topic = COALESCE(topic, @topic) WHERE name = @name', { topic: oldTopic, name: input.to });
      let moved = 0;
      if (plan.moveMail) {
        moved = this.run('UPDATE messages SET to_agent = @to WHERE to_agent = @from AND read_at IS NULL', { from, to: input.to }).changes;
        // A session never reads back what it sent to its client address, under any of its names.
        this.run('UPDATE messages SET from_agent = @to WHERE from_agent = @from AND read_at IS NULL', { from, to: input.to });
        this.run('DELETE FROM agents WHERE name = ?', [from]);
      }
      this.run(`UPDATE sessions SET name = @to, last_seen = @now WHERE ${SESSION_KEY}`, { ...this.keyParams(input.key), to: input.to, now: input.now });
      return { from, moved };
    });
  }

  async retire(old: string, moveTo: string | null): Promise<{ removed: boolean; moved: number; left: number }> {
    return this.immediate(() => {
      const removed = this.run('DELETE FROM agents WHERE name = ?', [old]).changes > 0;
      if (moveTo === null) {
        const left = this.get<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE to_agent = ? AND read_at IS NULL', [old])?.n ?? 0;
        return { removed, moved: 0, left };
      }
      const moved = this.run('UPDATE messages SET to_agent = ? WHERE to_agent = ? AND read_at IS NULL', [moveTo, old]).changes;
      return { removed, moved, left: 0 };
    });
  }

  async route(threadId: string): Promise<ClientRoute | null> {
    return this.get<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE thread_id = ?`, [threadId]) ?? null;
  }

  async saveRoute(route: ClientRoute): Promise<void> {
    this.immediate(() =>
      this.run(
        `INSERT INTO client_routes (thread_id, agent, client, executable, client_pid, client_started, repo_path, updated_at, turn_state)
         VALUES (@threadId, @agent, @client, @executable, @clientPid, @clientStarted, @repoPath, @updatedAt, @turnState)
         ON CONFLICT(thread_id) DO UPDATE SET agent = excluded.agent, client = excluded.client, executable = excluded.executable,
           client_pid = excluded.client_pid, client_started = excluded.client_started, repo_path = excluded.repo_path,
           updated_at = excluded.updated_at, turn_state = COALESCE(excluded.turn_state, turn_state),
           queued_at = CASE WHEN excluded.turn_state = 'busy' THEN NULL ELSE queued_at END`,
        {
          threadId: route.threadId,
          agent: route.agent,
          client: route.client,
          executable: route.executable,
          clientPid: route.clientPid,
          clientStarted: route.clientStarted,
          repoPath: route.repoPath,
          updatedAt: route.updatedAt,
          turnState: route.turnState ?? null,
        },
      ),
    );
  }

  async routes(agent?: string): Promise<ClientRoute[]> {
    if (agent === undefined) return this.all<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes ORDER BY updated_at`);
    return this.all<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE agent = ? ORDER BY updated_at`, [agent]);
  }

  async markQueued(threadId: string, now: string): Promise<boolean> {
    return this.immediate(
      () => this.run("UPDATE client_routes SET queued_at = ? WHERE thread_id = ? AND turn_state = 'idle' AND queued_at IS NULL", [now, threadId]).changes > 0,
    );
  }

  async bindSessionKey(key: SessionKey, sessionKey: string): Promise<void> {
    this.immediate(() => this.run(`UPDATE sessions SET session_key = @sessionKey WHERE ${SESSION_KEY}`, { ...this.keyParams(key), sessionKey }));
  }

  async touchSession(key: SessionKey, now: string): Promise<void> {
    this.immediate(() => this.run(`UPDATE sessions SET last_seen = @now WHERE ${SESSION_KEY} AND last_seen < @now`, { ...this.keyParams(key), now }));
  }

  async publishNotice(input: PublishNoticeInput): Promise<{ evicted: NoticeRecord[]; expired: NoticeRecord[] }> {
    return this.immediate(() => {
      const notice = input.notice;
      // Expired notices are nobody's any more: they go at the next publish, with their receipts.
      const expired = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.expires_at <= ?`, [input.expireBefore]);
      for (const old of expired) this.deleteNotice(old.noticeId);
      this.run(
        `INSERT INTO notices (notice_id, channel, severity, title, body, source, priority, content_hash, created_at, expires_at)
         VALUES (@noticeId, @channel, @severity, @title, @body, @source, @priority, @contentHash, @createdAt, @expiresAt)`,
        { ...notice },
      );
      const live = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS @channel`, { channel: notice.channel });
      const evicted = input.evict(live);
      for (const victim of evicted) this.deleteNotice(victim.noticeId);
      return { evicted, expired };
    });
  }

  private deleteNotice(noticeId: string): void {
    this.run('DELETE FROM notice_receipts WHERE notice_id = ?', [noticeId]);
    this.run('DELETE FROM notices WHERE notice_id = ?', [noticeId]);
  }

  private dueParams(query: DueNoticesQuery): { params: Params; criticalOnly: boolean; withAlso: boolean } {
    const criticalOnly = isCriticalOnly(query);
    const params: Params = { session: query.session, now: query.now };
    if (!query.all) params.channels = JSON.stringify(query.channels);
    const withAlso = criticalOnly && (query.alsoIds?.length ?? 0) > 0;
    if (withAlso) params.also = JSON.stringify(query.alsoIds);
    return { params, criticalOnly, withAlso };
  }

  private countDue(query: DueNoticesQuery): Record<Severity, number> {
    const { params, criticalOnly, withAlso } = this.dueParams(query);
    const totalDue: Record<Severity, number> = { critical: 0, alert: 0, info: 0 };
    const counts = this.all<{ severity: Severity; n: number }>(`SELECT n.severity, COUNT(*) AS n ${dueWhere(criticalOnly, query.all, withAlso)} GROUP BY n.severity`, params);
    for (const { severity, n } of counts) totalDue[severity] = n;
    return totalDue;
  }

  private readDue(query: DueNoticesQuery, limit: number): NoticeCandidate[] {
    const { params, criticalOnly, withAlso } = this.dueParams(query);
    return this.all<NoticeCandidate>(
      `SELECT ${NOTICE_COLUMNS}, r.delivered_at AS deliveredAt ${dueWhere(criticalOnly, query.all, withAlso)}
       ORDER BY ${SEVERITY_RANK}, n.priority DESC, n.created_at, n.notice_id LIMIT @limit`,
      { ...params, limit },
    );
  }

  async anyNoticeDue(query: DueNoticesQuery): Promise<boolean> {
    const { params, criticalOnly, withAlso } = this.dueParams(query);
    return this.all(`SELECT 1 ${dueWhere(criticalOnly, query.all, withAlso)} LIMIT 1`, params).length > 0;
  }

  async deliverNotices<S extends NoticeDecision>(input: DeliverNoticesInput<S>): Promise<S> {
    const { query } = input;
    // Most deliveries write nothing (no info notice shown): they read without the write lock.
    return this.readMostly(() => {
      const totalDue = this.countDue(query);
      const limit = input.readLimit(totalDue);
      const due = limit > 0 && totalDue.critical + totalDue.alert + totalDue.info > 0 ? this.readDue(query, limit) : [];
      const selection = input.decide(due, totalDue);
      for (const noticeId of selection.receipts) {
        this.run(
          `INSERT INTO notice_receipts (notice_id, session, delivered_at) VALUES (@id, @session, @now)
           ON CONFLICT(notice_id, session) DO UPDATE SET delivered_at = COALESCE(delivered_at, excluded.delivered_at)`,
          { id: noticeId, session: query.session, now: query.now },
        );
      }
      return selection;
    });
  }

  async notices(filter: NoticeFilter): Promise<NoticeListing[]> {
    const conditions: string[] = [];
    const params: Params = { now: filter.now };
    if (!filter.includeExpired) conditions.push('n.expires_at > @now');
    if (filter.channel !== undefined) {
      conditions.push('n.channel IS @channel');
      params.channel = filter.channel;
    }
    return this.all<NoticeListing>(
      `SELECT ${NOTICE_COLUMNS},
         (SELECT COUNT(*) FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.delivered_at IS NOT NULL) AS deliveredTo,
         (SELECT COUNT(*) FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.acknowledged_at IS NOT NULL) AS acknowledgedBy
       FROM notices n ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
       ORDER BY n.channel IS NOT NULL, n.channel, ${SEVERITY_RANK}, n.priority DESC, n.created_at`,
      params,
    );
  }

  async channelCounts(now: string): Promise<ChannelCount[]> {
    return this.all<ChannelCount>(
      `SELECT n.channel, COUNT(*) AS total, SUM(n.severity = 'critical') AS critical, SUM(n.severity = 'alert') AS alert,
              SUM(n.severity = 'info') AS info, MAX(n.expires_at) AS lastExpiry
         FROM notices n WHERE n.expires_at > ? GROUP BY n.channel ORDER BY n.channel IS NOT NULL, n.channel`,
      [now],
    );
  }

  async acknowledgeNotice(noticeId: string, session: string, now: string): Promise<NoticeRecord | null> {
    return this.immediate(() => {
      const notice = this.get<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = ?`, [noticeId]) ?? null;
      if (notice === null) return null;
      this.run(
        `INSERT INTO notice_receipts (notice_id, session, acknowledged_at) VALUES (@id, @session, @now)
         ON CONFLICT(notice_id, session) DO UPDATE SET acknowledged_at = COALESCE(acknowledged_at, excluded.acknowledged_at)`,
        { id: noticeId, session, now },
      );
      return notice;
    });
  }

  async clearNotices(target: NoticeClearTarget): Promise<NoticeRecord[]> {
    return this.immediate(() => {
      let removed: NoticeRecord[];
      if (target.kind === 'id') removed = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = ?`, [target.noticeId]);
      else if (target.kind === 'channel') removed = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS ?`, [target.channel]);
      else removed = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n`);
      for (const notice of removed) this.deleteNotice(notice.noticeId);
      return removed;
    });
  }

  async reconcileChannel(input: ReconcileInput): Promise<ReconcileOutcome> {
    return this.immediate(() => {
      const current = this.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS ? ORDER BY n.created_at, n.notice_id`, [input.channel]);
      const plan = input.plan(current);
      for (const { noticeId, priority } of plan.reprioritize) this.run('UPDATE notices SET priority = ? WHERE notice_id = ?', [priority, noticeId]);
      for (const notice of plan.added) {
        this.run(
          `INSERT INTO notices (notice_id, channel, severity, title, body, source, priority, content_hash, created_at, expires_at)
           VALUES (@noticeId, @channel, @severity, @title, @body, @source, @priority, @contentHash, @createdAt, @expiresAt)`,
          { ...notice },
        );
      }
      for (const notice of plan.removed) this.deleteNotice(notice.noticeId);
      this.writeBrainState(input.state);
      return { kept: plan.kept, added: plan.added, removed: plan.removed };
    });
  }

  private writeBrainState(state: BrainState): void {
    this.run(
      `INSERT INTO brain_state (channel, source_kind, location, content_hash, entry_count, cut_by_cap, warnings, last_fetch_at, last_ok_at, last_error)
       VALUES (@channel, @sourceKind, @location, @contentHash, @entryCount, @cutByCap, @warnings, @lastFetchAt, @lastOkAt, @lastError)
       ON CONFLICT(channel) DO UPDATE SET source_kind = excluded.source_kind, location = excluded.location,
         content_hash = excluded.content_hash, entry_count = excluded.entry_count, cut_by_cap = excluded.cut_by_cap,
         warnings = excluded.warnings, last_fetch_at = excluded.last_fetch_at, last_ok_at = excluded.last_ok_at,
         last_error = excluded.last_error`,
      { ...state },
    );
  }

  async recordBrainState(state: BrainState): Promise<void> {
    this.immediate(() => this.writeBrainState(state));
  }

  async brainState(channel: string): Promise<BrainState | null> {
    return (
      this.get<BrainState>(
        `SELECT channel, source_kind AS sourceKind, location, content_hash AS contentHash, entry_count AS entryCount,
                cut_by_cap AS cutByCap, warnings, last_fetch_at AS lastFetchAt, last_ok_at AS lastOkAt, last_error AS lastError
           FROM brain_state WHERE channel = ?`,
        [channel],
      ) ?? null
    );
  }

  async tick(session: string, counter: string, now: string): Promise<number> {
    return this.immediate(
      () =>
        this.get<{ value: number }>(
          `INSERT INTO session_counters (session, counter, value, updated_at) VALUES (@session, @counter, 1, @now)
           ON CONFLICT(session, counter) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at
           RETURNING value`,
          { session, counter, now },
        )?.value ?? 1,
    );
  }

  async takeMarker(key: string, session: string, now: string): Promise<boolean> {
    return this.immediate(
      () => this.run('INSERT OR IGNORE INTO brain_markers (marker_key, session, taken_at) VALUES (?, ?, ?)', [key, session, now]).changes > 0,
    );
  }

  async takeWake(agent: string, now: string, since: string, allow: (recent: number) => boolean): Promise<boolean> {
    return this.immediate(() => {
      this.run('DELETE FROM wakes WHERE woken_at < ?', [since]);
      const recent = this.get<{ n: number }>('SELECT COUNT(*) AS n FROM wakes WHERE agent = ?', [agent])?.n ?? 0;
      if (!allow(recent)) return false;
      this.run('INSERT INTO wakes (agent, woken_at) VALUES (?, ?)', [agent, now]);
      return true;
    });
  }

  async claimWatch(session: string, token: string, pid: number, now: string, agent: string): Promise<void> {
    this.immediate(() =>
      this.run(
        `INSERT INTO watchers (session, token, pid, started_at, agent) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent`,
        [session, token, pid, now, agent],
      ),
    );
  }

  async lastPosition(): Promise<number> {
    return this.get<{ position: number | null }>('SELECT MAX(rowid) AS position FROM messages')?.position ?? 0;
  }

  async messagesByPosition(after: number, also: number[], limit: number): Promise<PositionedMessage[]> {
    if (limit <= 0) return [];
    return this.all<PositionedMessage>(
      `SELECT rowid AS position, ${MESSAGE_COLUMNS} FROM messages
       WHERE rowid > ? OR rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid LIMIT ?`,
      [after, JSON.stringify(also), limit],
    );
  }

  async fanoutCopies(fanoutId: string, repo: string): Promise<Array<FanoutCopy & { leased: boolean }>> {
    return this.all<FanoutCopy & { leased: number }>(
      `SELECT message_id AS messageId, fanout_id AS fanoutId, to_agent AS toAgent, claimed_by AS claimedBy, read_at AS readAt,
              lease_until IS NOT NULL AS leased
         FROM messages WHERE fanout_id = ? AND to_group = ?`,
      [fanoutId, repo],
    ).map((copy) => ({ ...copy, leased: Boolean(copy.leased) }));
  }

  async watchers(): Promise<Array<{ agent: string; pid: number }>> {
    return this.all<{ agent: string; pid: number }>('SELECT agent, pid FROM watchers WHERE agent IS NOT NULL');
  }

  async holdsWatch(session: string, token: string): Promise<boolean> {
    return this.get<{ token: string }>('SELECT token FROM watchers WHERE session = ?', [session])?.token === token;
  }

  async releaseWatch(session: string, token: string): Promise<void> {
    this.immediate(() => this.run('DELETE FROM watchers WHERE session = ? AND token = ?', [session, token]));
  }

  // ------------------------------------------------------------------ tokens

  async createToken(token: TokenRecord, register: Registration[]): Promise<void> {
    this.immediate(() => {
      this.registerNow(register, token.createdAt);
      this.run(
        `INSERT INTO tokens (token_id, agent, repo_path, secret_hash, scopes, created_at, expires_at, last_used_at, revoked_at)
         VALUES (@tokenId, @agent, @repoPath, @secretHash, @scopes, @createdAt, @expiresAt, @lastUsedAt, @revokedAt)`,
        { ...token },
      );
    });
  }

  async tokenById(tokenId: string): Promise<TokenRecord | null> {
    return this.get<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE token_id = ?`, [tokenId]) ?? null;
  }

  async listTokens(): Promise<TokenRecord[]> {
    return this.all<TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at, token_id`);
  }

  async revokeTokens(idOrAgent: string, now: string): Promise<string[]> {
    return this.immediate(() => {
      const ids = this.all<{ tokenId: string }>(
        'SELECT token_id AS tokenId FROM tokens WHERE (token_id = @key OR agent = @key) AND revoked_at IS NULL ORDER BY token_id',
        { key: idOrAgent },
      ).map((row) => row.tokenId);
      for (const id of ids) this.run('UPDATE tokens SET revoked_at = @now WHERE token_id = @id', { id, now });
      return ids;
    });
  }

  async noteTokenUse(tokenId: string, now: string, unlessSince: string): Promise<void> {
    this.immediate(() =>
      this.run('UPDATE tokens SET last_used_at = @now WHERE token_id = @tokenId AND (last_used_at IS NULL OR last_used_at < @unlessSince)', { tokenId, now, unlessSince }),
    );
  }

  async *exportRows(table: TableModel, batch: number): AsyncGenerator<TableRow[]> {
    // Messages in the order they were written: the newest stay newest in the copy.
    const order = table.name === 'messages' ? 'rowid' : table.key.join(', ');
    let rows: TableRow[] = [];
    for (const row of this.db.iterate<TableRow>(`SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${order}`)) {
      rows.push(row);
      if (rows.length >= batch) {
        yield rows;
        rows = [];
      }
    }
    if (rows.length > 0) yield rows;
  }

  async importRows(table: TableModel, rows: TableRow[]): Promise<void> {
    if (rows.length === 0) return;
    const insert = this.db.statement(`INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`);
    this.immediate(() => {
      for (const row of rows) insert.run(table.columns.map((column) => row[column] ?? null));
    });
  }

  async countRows(table: TableModel): Promise<number> {
    return this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table.name}`)?.n ?? 0;
  }

  changes(): ChangeFeed {
    return sqliteChangeFeed(this.location, () => this.db.pragma('data_version') as number);
  }

  // ------------------------------------------------------------ maintenance

  async prune(input: PruneInput): Promise<PruneCounts> {
    const work = (): PruneCounts => {
      // Threads wholly read and wholly older: a reply sent meanwhile (unread, newer) is never among them.
      const threads = this.all<{ thread_id: string }>(
        'SELECT thread_id FROM messages GROUP BY thread_id HAVING MAX(sent_at) < ? AND SUM(read_at IS NULL) = 0',
        [input.mailBefore],
      ).map((row) => row.thread_id);
      const inThreads = 'thread_id IN (SELECT value FROM json_each(?)) AND read_at IS NOT NULL AND sent_at < ?';
      const threadParams = [JSON.stringify(threads), input.mailBefore];
      const expired = 'SELECT notice_id FROM notices WHERE expires_at <= ?';
      const orphanReceipts = `notice_id IN (${expired}) OR notice_id NOT IN (SELECT notice_id FROM notices)`;
      const endedSessions = 'ended_at IS NOT NULL AND ended_at < ?';
      if (input.dryRun) {
        return {
          threads: threads.length,
          messages: this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM messages WHERE ${inThreads}`, threadParams)?.n ?? 0,
          notices: this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${expired})`, [input.now])?.n ?? 0,
          receipts: this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notice_receipts WHERE ${orphanReceipts}`, [input.now])?.n ?? 0,
          sessions: this.get<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore])?.n ?? 0,
        };
      }
      const messages = this.run(`DELETE FROM messages WHERE ${inThreads}`, threadParams).changes;
      const receipts = this.run(`DELETE FROM notice_receipts WHERE ${orphanReceipts}`, [input.now]).changes;
      const notices = this.run('DELETE FROM notices WHERE expires_at <= ?', [input.now]).changes;
      const sessions = this.run(`DELETE FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore]).changes;
      return { messages, threads: threads.length, notices, receipts, sessions };
    };
    return input.dryRun ? this.db.deferred(work) : this.immediate(work);
  }

  async reclaimSpace(): Promise<{ before: number; after: number }> {
    const size = (): number => (this.db.pragma('page_count') as number) * (this.db.pragma('page_size') as number);
    const before = size();
    // A database made before incremental vacuum was set: one full VACUUM switches it over.
    if ((this.db.pragma('auto_vacuum') as number) !== INCREMENTAL_VACUUM) this.db.exec('PRAGMA auto_vacuum = INCREMENTAL; VACUUM');
    else this.db.exec('PRAGMA incremental_vacuum');
    return { before, after: size() };
  }

  async claimMaintenance(task: string, now: string, notSince: string): Promise<boolean> {
    return this.immediate(
      () =>
        this.run(
          `INSERT INTO maintenance (task, last_run_at) VALUES (?, ?)
           ON CONFLICT (task) DO UPDATE SET last_run_at = excluded.last_run_at WHERE maintenance.last_run_at < ?`,
          [task, now, notSince],
        ).changes > 0,
    );
  }

  async integrity(): Promise<StoreIntegrity> {
    const findings = this.db.pragmaRows<{ quick_check: string }>('quick_check').map((row) => row.quick_check);
    return {
      engine: 'sqlite',
      schemaVersion: this.db.pragma('user_version') as number,
      targetVersion: TARGET_VERSION,
      problems: findings.filter((finding) => finding !== 'ok'),
    };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
