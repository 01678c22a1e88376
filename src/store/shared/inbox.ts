/**
 * The inbox query (QUERIES.md, "The inbox"), written once for both engines: each binds the same
 * parameters under its own placeholders.
 */
import { lazy } from './lazy.js';
import type { InboxQuery, ReadOutcome, ReaderIdentity } from '../ports/inbox.js';
import { MESSAGE_FIELDS, selectList } from './columns.js';

/** The names an inbox query binds, from its reader. */
export interface InboxParties {
  /** The reader. */
  me: string;
  /** The reader's repo: the repo its fan-out copies are filed under. */
  repo: string;
  /** The client address a session shares with its siblings (null for any other reader). */
  shared: string | null;
  /** The shared client address, else the reader itself. */
  sharedOrMe: string;
  /** The bare repo name, when it is not the reader's own name. */
  bareRepo: string | null;
}

export function inboxParties(reader: ReaderIdentity): InboxParties {
  const shared = reader.isSession ? reader.clientAddress : null;
  return { me: reader.name, repo: reader.repo, shared, sharedOrMe: shared ?? reader.name, bareRepo: reader.repo !== reader.name ? reader.repo : null };
}

/** Where each engine binds the inbox's parties: a placeholder for each. */
export type InboxPlaceholders = { readonly [Party in keyof InboxParties]: string };

/**
 * What a selection does with mail under a lease: leaves out what is leased past `now` (the placeholder
 * of a stamp), or, to count what is unread, includes it (a message being shown is still unread).
 */
export type LeaseRule = { includeLeased: false; now: string } | { includeLeased: true };

const MESSAGE_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS));

/**
 * The reader's unread mail, in three disjoint parts: its own; for a session, mail at its client
 * address that it did not send itself (a fan-out copy only while it holds no copy of its own); and
 * mail to its bare repo name while nobody holds that name (left by a rename, or by an older agent-bus
 * that could not fan out; a fan-out copy only while neither it nor its client address holds one).
 * Every copy is filed under its recipient's repo, so the copy lookups stay within the reader's repo.
 * Mail a hook is showing right now (its lease has not run out) is nobody else's to take.
 */
export function inboxUnion(at: InboxPlaceholders, leases: LeaseRule): string {
  const unread = leases.includeLeased ? 'm.read_at IS NULL' : `m.read_at IS NULL AND (m.lease_until IS NULL OR m.lease_until < ${leases.now})`;
  const noOwnCopy = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = ${at.repo} AND s.to_agent = ${at.me}))`;
  const noOwnOrSharedCopy = `(m.fanout_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = ${at.repo} AND s.to_agent IN (${at.me}, ${at.sharedOrMe})))`;
  return `
  SELECT ${MESSAGE_COLUMNS()} FROM messages m WHERE m.to_agent = ${at.me} AND ${unread}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS()} FROM messages m
   WHERE m.to_agent = ${at.shared} AND ${unread} AND m.from_agent <> ${at.me} AND ${noOwnCopy}
  UNION ALL
  SELECT ${MESSAGE_COLUMNS()} FROM messages m
   WHERE m.to_agent = ${at.bareRepo} AND ${unread}
     AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.name = ${at.bareRepo}) AND ${noOwnOrSharedCopy}`;
}

/** Which of the inbox a selection takes: all of it, without the copies somebody else claimed, or only the urgent ones of those. */
export type InboxFilter = 'all' | 'actionable' | 'urgent';

export const INBOX_FILTERS: readonly InboxFilter[] = ['all', 'actionable', 'urgent'];

export function inboxFilterOf(query: Pick<InboxQuery, 'actionableOnly' | 'urgentOnly'>): InboxFilter {
  return query.urgentOnly ? 'urgent' : query.actionableOnly ? 'actionable' : 'all';
}

/**
 * The inbox as a read sees it, without what is leased past `now`: oldest first (sent_at, then
 * message_id), at most `limit` (a placeholder, or a number), through `filter`.
 */
export function inboxSelect(at: InboxPlaceholders, options: { now: string; filter: InboxFilter; limit: string }): string {
  const actionable = `(x."claimedBy" IS NULL OR x."claimedBy" = ${at.me})`;
  const where = { all: '', actionable: `WHERE ${actionable}`, urgent: `WHERE ${actionable} AND x."priority" IS NOT NULL` }[options.filter];
  return `SELECT * FROM (${inboxUnion(at, { includeLeased: false, now: options.now })}) x ${where} ORDER BY x."sentAt", x."messageId" LIMIT ${options.limit}`;
}

/**
 * The mid-turn look (InboxPort.midTurnMailMayWait): unread mail to `name`, to `repo`, or to a name in
 * [`sessionsFrom`, `sessionsTo`) (`name-` up to `name.`: the session addresses), urgent only when asked
 * (through the partial index of unread urgent mail).
 */
export function midTurnLook(at: { name: string; repo: string; sessionsFrom: string; sessionsTo: string }, urgentOnly: boolean): string {
  return `SELECT 1 FROM messages WHERE ${urgentOnly ? 'priority IS NOT NULL AND ' : ''}read_at IS NULL
    AND (to_agent IN (${at.name}, ${at.repo}) OR (to_agent >= ${at.sessionsFrom} AND to_agent < ${at.sessionsTo})) LIMIT 1`;
}

/** A read or a lease that found nothing. */
export function nothingRead(): ReadOutcome {
  return { messages: [], decision: { rows: [], claims: [], contested: [], settle: [] } };
}
