/**
 * Who a send reaches. Pure decisions over roster rows the store read inside
 * the send's transaction: the four address forms, skipping the sender,
 * one copy per client for clients with sessions, and idle skipping.
 */
import { formatStamp } from '../model/clock.js';
import { randomId, timeOrderedId } from '../model/ids.js';
import { UnknownRecipientError } from '../model/errors.js';
import { BROADCAST, clientAddressOf, repoOf, isSessionName } from './names.js';
import { closeMatches } from './similarity.js';
import { agentRepo } from './roster.js';
import type { AgentRecord, RosterQuery, SendPlan } from '../store/ports.js';
import { quoted } from '../model/quote.js';

export function rosterQueryFor(to: string): RosterQuery {
  if (to === BROADCAST) return { kind: 'all' };
  if (to.includes('/')) return { kind: 'name', name: to };
  return { kind: 'repo', repo: to };
}


export interface PlanOptions {
  to: string;
  /** Names that never receive this send: the sender, and whatever its identity adds. */
  skip: ReadonlySet<string>;
  threadId: string | null;
  nowMicros: number;
  fanoutMaxIdleDays: number;
}

/** Thrown inside the transaction; the bus turns it into an error with suggestions. */
export class NoSuchRecipient extends Error {
  constructor(readonly to: string) {
    super(`no agent or group named ${quoted(to)} is on the bus`);
  }
}

function fanoutMembers(candidates: AgentRecord[], skip: ReadonlySet<string>): AgentRecord[] {
  const names = new Set(candidates.map((agent) => agent.name));
  return candidates.filter((agent) => {
    if (skip.has(agent.name)) return false;
    // A client with sessions gets one copy, at the address its sessions share.
    if (isSessionName(agent.name)) {
      const shared = clientAddressOf(agent.name);
      if (shared !== null && names.has(shared)) return false;
    }
    return true;
  });
}

/** Within each repo, drop members idle past the cutoff, unless nobody there is fresh. */
export function trimIdle(members: AgentRecord[], nowMicros: number, maxIdleDays: number): AgentRecord[] {
  if (maxIdleDays <= 0) return members;
  const cutoff = formatStamp(nowMicros - maxIdleDays * 86_400_000_000);
  const byRepo = new Map<string, AgentRecord[]>();
  for (const member of members) {
    const repo = agentRepo(member);
    const list = byRepo.get(repo);
    if (list) list.push(member);
    else byRepo.set(repo, [member]);
  }
  const kept = new Set<string>();
  for (const list of byRepo.values()) {
    const fresh = list.filter((member) => member.lastSeen >= cutoff);
    for (const member of fresh.length > 0 ? fresh : list) kept.add(member.name);
  }
  return members.filter((member) => kept.has(member.name));
}

function byName(a: AgentRecord, b: AgentRecord): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function planSend(candidates: AgentRecord[], options: PlanOptions): SendPlan {
  const { to } = options;
  const sorted = [...candidates].sort(byName);
  const direct = (agent: AgentRecord): SendPlan => ({
    kind: 'direct',
    fanoutId: null,
    threadId: options.threadId ?? randomId(),
    rows: [{ messageId: timeOrderedId(), toAgent: agent.name, toGroup: null }],
  });
  const fanout = (kind: 'group' | 'broadcast', members: AgentRecord[]): SendPlan => {
    const recipients = trimIdle(fanoutMembers(members, options.skip), options.nowMicros, options.fanoutMaxIdleDays);
    return {
      kind,
      fanoutId: recipients.length > 0 ? randomId() : null,
      threadId: options.threadId ?? (recipients.length > 0 ? randomId() : null),
      rows: recipients.map((agent) => ({ messageId: timeOrderedId(), toAgent: agent.name, toGroup: agentRepo(agent) })),
    };
  };

  if (to === BROADCAST) return fanout('broadcast', sorted);
  if (to.includes('/')) {
    const target = sorted.find((agent) => agent.name === to);
    if (!target) throw new NoSuchRecipient(to);
    return direct(target);
  }
  const members = sorted.filter((agent) => agentRepo(agent) === to);
  if (members.length === 0) throw new NoSuchRecipient(to);
  const only = members[0];
  if (members.length === 1 && only && only.name === to) return direct(only);
  return fanout('group', members);
}

/** The text of an unknown-recipient error: the repo's agents, or close matches. */
export function unknownRecipient(to: string, roster: AgentRecord[], nothingDone = 'Nothing was sent'): UnknownRecipientError {
  const repo = repoOf(to);
  const inRepo = roster.filter((agent) => agentRepo(agent) === repo).map((agent) => agent.name).sort();
  let hint = '';
  if (inRepo.length > 0) {
    hint = ` Agents in that repo: ${inRepo.join(', ')}.`;
  } else {
    const pool = new Set<string>();
    for (const agent of roster) {
      pool.add(agent.name);
      pool.add(agentRepo(agent));
    }
    const matches = closeMatches(to, pool);
    if (matches.length > 0) hint = ` Did you mean: ${matches.join(', ')}?`;
  }
  return new UnknownRecipientError(
    to,
    `no agent or group named ${quoted(to)} is on the bus.${hint} ${nothingDone}; list the agents to see who is reachable.`,
  );
}

const HOW_AGENTS_JOIN = 'agents join when their client starts `agent-bus serve`';

/**
 * What a sender is told when a send reached nobody. It is never an error and
 * nothing was lost: a repo or `*` with nobody else in it simply has no reader yet.
 */
export function nobodyReachedNote(kind: 'direct' | 'group' | 'broadcast', to: string): string {
  if (kind === 'broadcast') return `sent to nobody: no other agent is on the bus yet; ${HOW_AGENTS_JOIN}`;
  if (kind === 'group') return `sent to nobody: no other agent is in ${quoted(to)} yet; ${HOW_AGENTS_JOIN}`;
  return `sent to nobody: no other session holds ${quoted(to)} yet`;
}
