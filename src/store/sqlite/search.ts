/**
 * Search on SQLite: an FTS5 index (message_search, its rowid the message's) brought up to date at
 * each search, a batch a transaction. A send pays nothing for it.
 */
import { lazy } from '../shared/lazy.js';
import { partiesVisibleTo, type SearchFilter, type SearchTerm } from '../../model/search.js';
import type { PositionedMessage } from '../ports/follow.js';
import type { SearchPort } from '../ports/search.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { searchConditions } from '../shared/search.js';
import type { SqliteConnection } from './driver.js';

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

/** Messages indexed in one transaction, at most. */
const INDEX_BATCH = 20_000;
/** What the search index reads of a message (messages' columns): its body, then its parties. */
const INDEXED_TEXT = lazy(() => `body || ' ' || ${partyTokenSql(partySql('from_agent'))} || ' ' || ${partyTokenSql(partySql('to_agent'))}
  || CASE WHEN to_group IS NULL THEN '' ELSE ' ' || ${partyTokenSql('to_group')} END`);

/**
 * A prefix is asked of the index as the words it starts, when they are this many at most. FTS5 answers
 * a prefix by merging the row lists of all its words before it returns the first row, so a prefix of
 * common words costs a read of every row they are in; their OR is read newest first, as far as needed.
 */
const MAX_PREFIX_WORDS = 32;

/** The index's vocabulary (one row per occurrence), for finding the words a prefix starts. */
const SEARCH_WORDS = 'temp.message_search_words';

/** A message's columns read through the search index (messages as m). */
const SEARCHED_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS, 'm'));

/**
 * The indexed words `prefix` starts, one seek into the vocabulary each (words are in byte order, so
 * those of a prefix are together); null when they are more than MAX_PREFIX_WORDS, or the prefix is
 * not ASCII (the tokenizer folds other letters by rules of its own, so only its prefix query is sure).
 */
function wordsStartingWith(db: SqliteConnection, prefix: string): string[] | null {
  if (!/^[a-z0-9]+$/.test(prefix)) return null;
  const words: string[] = [];
  let from = prefix;
  for (;;) {
    const word = db.get<{ term: string }>(`SELECT term FROM ${SEARCH_WORDS} WHERE term >= ? LIMIT 1`, [from])?.term;
    if (word === undefined || !word.startsWith(prefix)) return words;
    if (words.length === MAX_PREFIX_WORDS) return null;
    words.push(word);
    // The least text after `word`: no indexed word holds a control character.
    from = `${word}\u0001`;
  }
}

/**
 * The FTS5 query, each part quoted so none is an operator: every term, and for a reader one of its
 * parties, so FTS5 walks the rows of both at once and a reader's search reads about as many rows as
 * the reader has mail, however common its words. Null when a prefix starts no indexed word.
 */
function matchQuery(db: SqliteConnection, terms: SearchTerm[], filter: SearchFilter): string | null {
  const parts: string[] = [];
  for (const term of terms) {
    if (term.kind === 'word') parts.push(`"${term.word}"`);
    else if (term.kind === 'phrase') parts.push(`"${term.words.join(' ')}"`);
    else {
      const words = wordsStartingWith(db, term.word);
      if (words === null) parts.push(`"${term.word}"*`);
      else if (words.length === 0) return null;
      else parts.push(`(${words.map((word) => `"${word}"`).join(' OR ')})`);
    }
  }
  if (filter.visibleTo !== null) parts.push(`(${partiesVisibleTo(filter.visibleTo).map((party) => `"${partyToken(party)}"`).join(' OR ')})`);
  return parts.join(' AND ');
}

function searchNow(db: SqliteConnection, terms: SearchTerm[], filter: SearchFilter, limit: number): PositionedMessage[] {
  const query = matchQuery(db, terms, filter);
  if (query === null) return [];
  const params: Record<string, string | number> = { query, limit };
  let bound = 0;
  const bind = (value: string | number): string => {
    const name = `p${++bound}`;
    params[name] = value;
    return `@${name}`;
  };
  // The index found mail with one of the reader's parties; these are the rule itself.
  const where = ['message_search MATCH @query', ...searchConditions(filter, { bind, startsWith: (column, prefix) => `substr(${column}, 1, length(${prefix})) = ${prefix}` })];
  if (filter.before !== null) where.push(`s.rowid < ${bind(filter.before)}`);
  return db.all<PositionedMessage>(
    `SELECT s.rowid AS position, ${SEARCHED_COLUMNS()} FROM message_search s JOIN messages m ON m.rowid = s.rowid
      WHERE ${where.join(' AND ')} ORDER BY s.rowid DESC LIMIT @limit`,
    params,
  );
}

/** How far the index goes: 'messages' for bodies (any agent-bus), 'parties' for bodies with their parties. */
function searchPositions(db: SqliteConnection): { messages: number; parties: number } {
  const rows = db.all<{ name: string; position: number }>("SELECT name, position FROM search_index WHERE name IN ('messages', 'parties')");
  const at = (name: string): number => rows.find((row) => row.name === name)?.position ?? 0;
  return { messages: at('messages'), parties: at('parties') };
}

function newestPosition(db: SqliteConnection): number {
  return db.get<{ position: number | null }>('SELECT MAX(rowid) AS position FROM messages')?.position ?? 0;
}

/**
 * Index the mail stored since the index was last brought up to date, each message with its parties.
 * An older agent-bus indexes bodies alone and moves only the 'messages' position: what it indexed past
 * the 'parties' position is indexed again here. Writers take turns, so positions are taken in order.
 */
function indexForSearch(db: SqliteConnection): void {
  // A batch a transaction: a bus whose mail is indexed all at once (after an upgrade) keeps its writers waiting
  // no longer than one batch takes.
  for (;;) {
    // What an older agent-bus indexed lies past 'parties' too.
    if (newestPosition(db) <= searchPositions(db).parties) return;
    db.immediate(() => {
      const { messages, parties } = searchPositions(db);
      if (messages > parties) {
        // Removing every row at once is the quick way when all of them lack their parties.
        if (parties === 0) db.run("INSERT INTO message_search (message_search) VALUES ('delete-all')");
        else db.run('DELETE FROM message_search WHERE rowid > ? AND rowid <= ?', [parties, messages]);
      }
      const upTo = Math.min(parties + INDEX_BATCH, newestPosition(db));
      db.run(`INSERT INTO message_search (rowid, body) SELECT rowid, ${INDEXED_TEXT()} FROM messages WHERE rowid > ? AND rowid <= ?`, [parties, upTo]);
      db.run("INSERT OR REPLACE INTO search_index (name, position) SELECT name, ? FROM (SELECT 'messages' AS name UNION ALL SELECT 'parties')", [upTo]);
    });
  }
}

export function sqliteSearch(db: SqliteConnection): SearchPort {
  /** Whether this connection has its view of the search index's vocabulary (SEARCH_WORDS). */
  let searchWordsOpen = false;
  return {
    async searchMessages(terms, filter, limit) {
      if (limit <= 0) return [];
      indexForSearch(db);
      if (!searchWordsOpen) {
        db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${SEARCH_WORDS} USING fts5vocab(main, 'message_search', 'instance')`);
        searchWordsOpen = true;
      }
      // One snapshot: the words a prefix starts are those of the index the query then reads.
      return db.deferred(() => searchNow(db, terms, filter, limit));
    },

    async indexForSearch() {
      indexForSearch(db);
    },

    /** Nothing: the index catches up at the next search cheaply, and a write beside the sends would hold their lock. */
    keepSearchIndexCurrent() {},
  };
}
