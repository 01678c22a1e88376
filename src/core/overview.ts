/**
 * The whole bus at a glance, for the dashboard: the roster by repo, the
 * threads newest first, a thread with each recipient's read state, and the
 * last day's mail by hour and by who wrote to whom. Every answer is a page:
 * its cost follows what is shown, not the size of the bus.
 */
import { formatStamp, type Clock } from '../model/clock.js';
import type { MailPort, MessageGlance, MessageRecord, OverviewPort, ThreadCount } from '../store/ports.js';
import type { ReceiptWay } from '../model/receipts.js';
import { receiptState, type ReceiptState } from '../model/receipts.js';
import type { AgentView } from './views.js';

/** A repo and its names, clients first with their sessions under them. */
export interface RepoGroup {
  repo: string;
  agents: AgentView[];
  unread: number;
  running: number;
}

export interface RosterPage {
  repos: RepoGroup[];
  /** All repos (or single names) on the roster, and all names. */
  totalRepos: number;
  totalAgents: number;
  offset: number;
}

export interface ThreadSummary extends ThreadCount {
  /** The newest message of the thread, as a glance. */
  last: { from: string; to: string; sentAt: string; preview: string };
}

export interface ThreadPage {
  threads: ThreadSummary[];
  /** Where the next page starts (a position), or null at the oldest message. */
  next: number | null;
}

/** One recipient's copy in a thread: its receipt (state, when and how delivered and read) and whether it claimed the send. */
export interface ThreadCopy {
  to: string;
  messageId: string;
  state: ReceiptState;
  deliveredAt: string | null;
  deliveredVia: string | null;
  readAt: string | null;
  readVia: string | null;
  claimedBy: string | null;
}

/** One send of a thread, its copies folded together: who got it, read it and claimed it. */
export interface ThreadSend {
  from: string;
  to: string;
  kind: 'direct' | 'group' | 'broadcast';
  body: string;
  sentAt: string;
  /** The first COPIES_SHOWN copies; the counts cover them all. */
  copies: ThreadCopy[];
  copyCount: number;
  /** Copies delivered (read ones among them) and read. */
  deliveredCount: number;
  readCount: number;
  /** Who claimed it, for mail to a repo. */
  claimedBy: string | null;
  /** Sent urgent: shown at its recipients' next tool call. */
  urgent: boolean;
}

/** A thread as the dashboard shows it: its first sends, oldest first, and whether there is more. */
export interface ThreadView {
  sends: ThreadSend[];
  /** More of the thread is stored than was read (THREAD_ROWS copies) or shown (THREAD_SENDS sends). */
  truncated: boolean;
}

export interface MailDay {
  /** 24 hours, oldest first, each `YYYY-MM-DDTHH` with its sends (zero where none). */
  hours: Array<{ hour: string; sends: number }>;
  pairs: Array<{ from: string; to: string; sends: number }>;
  since: string;
}

const HOUR_MICROS = 3_600_000_000;
/** Messages read per look while gathering a page of threads, and the most one page reads. */
const GLANCE_BATCH = 500;
const GLANCE_BUDGET = 20_000;
/** The copies a thread view reads at most (a broadcast to every agent is one send of many copies), the sends it shows, and the copies of each. */
export const THREAD_ROWS = 2_000;
const THREAD_SENDS = 200;
const COPIES_SHOWN = 50;

/** Repos in name order, each with its names; a page of `limit` repos from `offset`. */
export function rosterPage(agents: AgentView[], offset: number, limit: number, filter = ''): RosterPage {
  const wanted = filter.trim().toLowerCase();
  const byRepo = new Map<string, AgentView[]>();
  for (const agent of agents) {
    if (wanted !== '' && !agent.name.toLowerCase().includes(wanted) && !(agent.topic ?? '').toLowerCase().includes(wanted)) continue;
    const list = byRepo.get(agent.group);
    if (list === undefined) byRepo.set(agent.group, [agent]);
    else list.push(agent);
  }
  const repos = [...byRepo.keys()].sort();
  const page = repos.slice(offset, offset + limit).map((repo): RepoGroup => {
    const members = byRepo.get(repo) ?? [];
    return {
      repo,
      // A client address, then its sessions (names sort that way: `repo/claude` before `repo/claude-1`).
      agents: members,
      unread: members.reduce((sum, agent) => sum + agent.pending_count, 0),
      running: members.filter((agent) => agent.live === true).length,
    };
  });
  return { repos: page, totalRepos: repos.length, totalAgents: [...byRepo.values()].reduce((sum, list) => sum + list.length, 0), offset };
}

/**
 * The threads with the newest messages, newest first, from position `before` on: each thread on
 * the page whose newest message is there, so a thread is on one page only (one with mail after
 * `before` was on an earlier page).
 */
export async function threadPage(store: OverviewPort, before: number | null, limit: number): Promise<ThreadPage> {
  const threads: ThreadSummary[] = [];
  const seen = new Set<string>();
  let cursor = before;
  let read = 0;
  let more = true;
  while (more && threads.length < limit && read < GLANCE_BUDGET) {
    const glances = await store.glancesBefore(cursor, GLANCE_BATCH);
    read += glances.length;
    more = glances.length === GLANCE_BATCH;
    const fresh = new Map<string, MessageGlance>();
    for (const glance of glances) {
      if (!seen.has(glance.threadId)) {
        // A new thread past a full page: the next look (or page) starts with it.
        if (threads.length + fresh.size >= limit) {
          more = true;
          break;
        }
        seen.add(glance.threadId);
        fresh.set(glance.threadId, glance);
      }
      cursor = glance.position;
    }
    const counts = new Map((await store.threadCounts([...fresh.keys()])).map((count) => [count.threadId, count]));
    for (const [threadId, glance] of fresh) {
      const count = counts.get(threadId);
      // Gone (pruned between the reads), or listed on an earlier page by a newer message.
      if (count === undefined || (before !== null && count.lastPosition >= before)) continue;
      threads.push({ ...count, last: { from: glance.fromAgent, to: glance.addressedTo ?? glance.toAgent, sentAt: glance.sentAt, preview: glance.preview } });
    }
  }
  return { threads, next: more ? cursor : null };
}

/** A thread's copies (read oldest first, at most THREAD_ROWS) folded into sends. */
export function foldThread(messages: MessageRecord[]): ThreadView {
  const sends = new Map<string, ThreadSend>();
  for (const message of messages) {
    const key = message.fanoutId ?? message.messageId;
    let send = sends.get(key);
    if (send === undefined) {
      send = {
        from: message.fromAgent,
        to: message.addressedTo ?? message.toAgent,
        kind: message.fanoutId === null ? 'direct' : message.addressedTo === '*' ? 'broadcast' : 'group',
        body: message.body,
        sentAt: message.sentAt,
        copies: [],
        copyCount: 0,
        deliveredCount: 0,
        readCount: 0,
        claimedBy: null,
        urgent: message.priority === 'urgent',
      };
      sends.set(key, send);
    }
    send.copyCount++;
    if (message.deliveredAt !== null || message.readAt !== null) send.deliveredCount++;
    if (message.readAt !== null) send.readCount++;
    if (send.kind === 'group' && send.claimedBy === null) send.claimedBy = message.claimedBy;
    if (send.copies.length < COPIES_SHOWN) {
      send.copies.push({
        to: message.toAgent,
        messageId: message.messageId,
        state: receiptState(message),
        deliveredAt: message.deliveredAt,
        deliveredVia: message.deliveredVia,
        readAt: message.readAt,
        readVia: message.readVia,
        claimedBy: message.claimedBy,
      });
    }
  }
  const all = [...sends.values()];
  return { sends: all.slice(0, THREAD_SENDS), truncated: messages.length >= THREAD_ROWS || all.length > THREAD_SENDS };
}

/** The last 24 hours of mail before `nowMicros`, every hour present. */
export async function mailDay(store: OverviewPort, nowMicros: number): Promise<MailDay> {
  const firstHour = Math.floor(nowMicros / HOUR_MICROS) * HOUR_MICROS - 23 * HOUR_MICROS;
  const since = formatStamp(firstHour);
  const window = await store.mailSince(since);
  const counted = new Map(window.hours.map((hour) => [hour.hour, hour.sends]));
  const hours = Array.from({ length: 24 }, (_, index) => {
    const hour = formatStamp(firstHour + index * HOUR_MICROS).slice(0, 13);
    return { hour, sends: counted.get(hour) ?? 0 };
  });
  return { hours, pairs: window.pairs, since };
}

/** The dashboard's reads, each a page whose cost follows what is shown. */
export class Overview {
  constructor(
    private readonly store: OverviewPort & Pick<MailPort, 'thread'>,
    private readonly clock: Clock,
    /** The roster as `agents` shows it. */
    private readonly agents: () => Promise<AgentView[]>,
    /** Mark mail shown to a reader as delivered (a thread drawn for the person it is to). */
    private readonly recordShown: (reader: string, messages: MessageRecord[], via: ReceiptWay) => Promise<MessageRecord[]>,
  ) {}

  /** A page of the roster by repo, optionally only names or topics holding `filter`. */
  async rosterPage(offset: number, limit: number, filter = ''): Promise<RosterPage> {
    return rosterPage(await this.agents(), offset, limit, filter);
  }

  /** The threads with the newest mail, newest first, from position `before` (null: the newest). */
  threadPage(before: number | null, limit: number): Promise<ThreadPage> {
    return threadPage(this.store, before, limit);
  }

  /** A thread's sends, oldest first, with each copy's receipt; with `shownTo`, its copies to that reader count as delivered by `via`. */
  async threadView(threadId: string, shownTo?: { reader: string; via: ReceiptWay }): Promise<ThreadView> {
    const messages = await this.store.thread(threadId, THREAD_ROWS);
    return foldThread(shownTo === undefined ? messages : await this.recordShown(shownTo.reader, messages, shownTo.via));
  }

  /** The last day's mail by hour and by sender and address. */
  mailDay(): Promise<MailDay> {
    return mailDay(this.store, this.clock.nowMicros());
  }
}
