/** How a name is filed on the roster: its repo and client columns, and the rows registered with it. */
import { clientAddressOf, repoOf, parseNameLenient } from './names.js';
import type { AgentRecord, Registration } from '../model/records.js';
import type { OrphanMail, RosterSnapshot } from '../store/ports.js';

/**
 * The registrations that put `name` on the roster. A session also registers
 * the client address its siblings share, first, so mail to that address has a holder.
 */
export function registrationsFor(name: string, repoPath: string, authoritative: boolean): Registration[] {
  const parsed = parseNameLenient(name);
  if (parsed === null || parsed.client === null) {
    return [{ name, repoPath, repo: null, client: null, authoritative }];
  }
  if (parsed.handle === null) {
    return [{ name, repoPath, repo: parsed.repo, client: parsed.client, authoritative }];
  }
  const shared = clientAddressOf(name) as string;
  return [
    { name: shared, repoPath, repo: parsed.repo, client: parsed.client, authoritative },
    // Session rows keep `client` empty: older versions parse any name with a client strictly.
    { name, repoPath, repo: parsed.repo, client: null, authoritative },
  ];
}

/** Where a participant speaking from a shell (the CLI, the chat) says it is. */
export interface SpeakerPlace {
  /** The name is the shell's own identity ($AGENT_BUS_NAME, else human), not one borrowed with --name. */
  own: boolean;
  /** $AGENT_BUS_REPO, resolved, when the environment declares one. */
  declaredRepo: string | null;
  /** The folder the command runs in. */
  cwd: string;
  /** The speaker's home folder. */
  home: string;
}

/**
 * How a speaker is put on the roster when it sends or connects. Its own
 * identity's declared repo is authoritative (the row moves there). A name with
 * no client part is a person, and people have no repo: they are filed at home,
 * never at whatever folder they happened to type in. Anyone else is filed at
 * the folder it speaks from, and speaking as somebody else never moves them.
 */
export function speakerRegistrations(name: string, place: SpeakerPlace): Registration[] {
  if (place.own && place.declaredRepo !== null) return registrationsFor(name, place.declaredRepo, true);
  const person = parseNameLenient(name)?.client === null;
  if (person) return registrationsFor(name, place.home, place.own);
  return registrationsFor(name, place.cwd, false);
}

/** The repo an agent belongs to: its repo column, else its name's repo part. */
export function agentRepo(agent: Pick<AgentRecord, 'name' | 'repo'>): string {
  return agent.repo ?? repoOf(agent.name);
}

/** Repo membership, one definition for every purpose: an agent's repo is its repo column, else its name's repo part. */
export function repoMembers(rows: AgentRecord[], repo: string): AgentRecord[] {
  return rows.filter((agent) => agentRepo(agent) === repo);
}

/**
 * Recipients of unread mail that no agent holds but that name a repo with agents in it:
 * mail to a bare repo name (left by a rename, or sent by an agent-bus too old to fan out)
 * waits there for the repo's first reader.
 */
export function waitingRepoNames(agents: AgentRecord[], recipients: string[]): string[] {
  const names = new Set(agents.map((agent) => agent.name));
  const repos = new Set(agents.map(agentRepo));
  return recipients.filter((recipient) => !names.has(recipient) && repos.has(recipient));
}

/**
 * Unread mail per roster name, as that name's own inbox would count it: its own, and the
 * mail waiting at its bare repo name, except fan-out copies it holds one of itself.
 */
export function pendingByName(snapshot: Pick<RosterSnapshot, 'agents' | 'unread' | 'orphans' | 'copyHolders'>): Map<string, number> {
  const pending = new Map<string, number>();
  for (const agent of snapshot.agents) pending.set(agent.name, 0);
  for (const { toAgent, n } of snapshot.unread) if (pending.has(toAgent)) pending.set(toAgent, (pending.get(toAgent) ?? 0) + n);
  const waiting = new Map<string, OrphanMail[]>();
  for (const orphan of snapshot.orphans) waiting.set(orphan.toAgent, [...(waiting.get(orphan.toAgent) ?? []), orphan]);
  for (const [repo, mail] of waiting) {
    for (const member of repoMembers(snapshot.agents, repo)) {
      const count = mail.filter((row) => row.fanoutId === null || !(snapshot.copyHolders.get(row.fanoutId) ?? []).includes(member.name)).length;
      pending.set(member.name, (pending.get(member.name) ?? 0) + count);
    }
  }
  return pending;
}
