/** Full-text search over mail bodies. */
import type { SearchFilter, SearchTerm } from '../../model/search.js';
import type { AttemptsOf } from './attempts.js';
import type { PositionedMessage } from './follow.js';

export interface SearchPort {
  /**
   * The copies whose body holds every term (words and prefixes as whole words, phrases in order;
   * case-insensitive; letters and digits make words), that `filter` lets through (see QUERIES.md
   * beside this folder), newest first, at most `limit`. The index is brought up to date with what
   * was stored since the last search first.
   */
  searchMessages(terms: SearchTerm[], filter: SearchFilter, limit: number): Promise<PositionedMessage[]>;
  /** Index the mail stored since the index was last brought up to date (a send pays nothing for search). */
  indexForSearch(): Promise<void>;
  /**
   * From now on, index this store's sends in the background once they commit, so that a search
   * after a burst has little left to index: for a process that lives on (the hub, an MCP server,
   * the dashboard, the chat). The sends themselves still wait for nothing of it. An engine whose
   * catching up at search time is cheap may do nothing.
   */
  keepSearchIndexCurrent(): void;
}

export const SEARCH_ATTEMPTS = {
  searchMessages: 'retryable',
  indexForSearch: 'retryable',
  keepSearchIndexCurrent: 'retryable',
} as const satisfies AttemptsOf<SearchPort>;
