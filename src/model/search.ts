/** A search query's terms, as core parses them and each engine writes them out in its own syntax. */
export type SearchTerm = { kind: 'word'; word: string } | { kind: 'prefix'; word: string } | { kind: 'phrase'; words: string[] };

/** Which mail a search may find, and the filters asked for. */
export interface SearchFilter {
  /** Only mail a reader may read: sent by or to `name`, or (with `repo`) to or from anyone in the repo, or to the repo. null: all mail. */
  visibleTo: { name: string; repo: string | null } | null;
  /** Sent by this name, or by anyone under it (a client address's sessions, a repo's agents). */
  from: string | null;
  /** Sent to this name, or addressed to this repo or `*`. */
  to: string | null;
  /** A thread id or the start of one. */
  thread: string | null;
  /** Sent at or after this stamp. */
  since: string | null;
}
