/**
 * What a reader's taking of its mail decides, as a pure function over the
 * rows the store selected and the copies of their fan-outs in the reader's
 * repo, both read inside the read's transaction:
 * - the claim: the first reader in a repo to take a repo-wide or `*` copy
 *   claims every copy of that send in the repo (it is asked to act; its
 *   repo-mates are told for information);
 * - which claims were contested: a repo-mate holds a copy too (audited `claim`);
 * - which copies the read settles with it: a session's own copy of a fan-out
 *   also settles a copy left at the client address it shares (an older sender
 *   addressed both), so the same mail never shows twice.
 * The lease a hook holds on mail it is about to show is also decided here.
 */
import { formatStamp } from '../model/clock.js';
import { uniqueToken } from '../model/ids.js';
import type { MessageRecord } from '../model/records.js';
import type { FanoutCopy, InboxDecision, ReaderIdentity } from '../store/ports.js';
import { clientAddressOf, repoOf, parseNameLenient } from './names.js';

/** How long a hook may take between taking mail and printing it before another reader may take it: well past the busy timeout. */
export const LEASE_MICROS = 90_000_000;

export function decideTake(rows: MessageRecord[], copies: FanoutCopy[], reader: ReaderIdentity): InboxDecision {
  const shared = reader.clientAddress ?? reader.name;
  const claims: string[] = [];
  const contested: string[] = [];
  const taken: MessageRecord[] = [];
  for (const row of rows) {
    const claimable = row.fanoutId !== null && row.claimedBy === null && row.toGroup === reader.repo;
    if (!claimable) {
      taken.push(row);
      continue;
    }
    const fanout = row.fanoutId as string;
    if (!claims.includes(fanout)) claims.push(fanout);
    taken.push({ ...row, claimedBy: reader.name });
    const mates = copies.some((copy) => copy.fanoutId === fanout && copy.toAgent !== reader.name && copy.toAgent !== shared);
    if (mates) contested.push(row.messageId);
  }
  const settle: string[] = [];
  if (reader.isSession && reader.clientAddress !== null) {
    const own = new Set(rows.filter((row) => row.fanoutId !== null && row.toAgent === reader.name).map((row) => row.fanoutId as string));
    for (const copy of copies) {
      if (own.has(copy.fanoutId) && copy.toAgent === reader.clientAddress && copy.readAt === null && !settle.includes(copy.messageId)) settle.push(copy.messageId);
    }
  }
  return { rows: taken, claims, contested, settle };
}

/** A lease on mail being shown: until when (a stamp, compared as text), and a token only its holder knows. */
export function newLease(nowMicros: number): string {
  return `${formatStamp(nowMicros + LEASE_MICROS)}|${uniqueToken()}`;
}

/** A reader as the store's inbox query sees it: its name, its repo, the client address it shares, whether it is a session. */
export function readerIdentity(name: string): ReaderIdentity {
  const parsed = parseNameLenient(name);
  return {
    name,
    repo: parsed?.repo ?? repoOf(name),
    clientAddress: clientAddressOf(name),
    isSession: parsed !== null && parsed.handle !== null,
  };
}
