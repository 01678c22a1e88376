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
  /** Stored before this position (the next page of a search): null, from the newest. */
  before: number | null;
}

/**
 * A name's party: its repo (the part before the first '/'), or the name itself when it has none.
 * Each engine's search index keeps, beside a message's words, the parties of its sender and its
 * recipient and its `to_group`, so a reader's search can start from the reader's own mail rather
 * than from every message its words are in.
 */
export function partyOf(name: string): string {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(0, slash);
}

/**
 * The parties of which every message `visibleTo` may read carries at least one: a message sent by or
 * to the reader carries the reader's party; one to or from anyone in the repo (the repo's name, or a
 * name under it) carries the repo's party; one to the repo carries the repo as its `to_group`. The
 * index finds the messages with one of these, and the exact rule (SearchFilter.visibleTo) is checked
 * on what it found, so a party shared with mail the reader may not see costs time, never a result.
 */
export function partiesVisibleTo(visibleTo: { name: string; repo: string | null }): string[] {
  const parties = [partyOf(visibleTo.name)];
  if (visibleTo.repo !== null) parties.push(partyOf(visibleTo.repo), visibleTo.repo);
  return [...new Set(parties)];
}
