/**
 * The identity of one hub request: the agent its token speaks for, and nothing
 * the request says but which of that agent's sessions it is. A token for a
 * client address (`repo/claude`) gives each session id the client sends (a
 * Codex thread id, the X-Agent-Bus-Session header) a session address of its
 * own, by the rules a local server follows; a call with no session id speaks
 * as the client address, which every session of that client shares.
 */
import type { ReceiptWay, SurfaceWay } from '../../model/receipts.js';
import type { Bus } from '../../core/bus.js';
import { sessionsEnabled } from '../../adapters/identity.js';
import { clientAddressOf, normaliseLabel, parseNameLenient } from '../../core/names.js';
import { presentedTokenId } from '../../core/tokens.js';
import { registrationsFor } from '../../core/roster.js';
import type { Env } from '../../model/settings.js';
import { InvalidInputError } from '../../model/errors.js';
import type { SessionRowKey, SessionRecord, TokenRecord } from '../../model/records.js';
import type { ToolSession } from '../../mcp/tool-session.js';
import { quoted } from '../../model/quote.js';

/** What a hub remembers across requests: the names it has put on the roster, and when it last noted each active (ms). */
export interface HubMemory {
  registered: Set<string>;
  touched: Map<string, number>;
}

/** Whether a token's agent is a client address whose sessions get addresses of their own on this hub. */
export function givesSessions(agent: string, env: Env): boolean {
  return clientAddressOf(agent) === agent && sessionsEnabled(env);
}

/** A client address's session rows, read beside the check of the token that names it. */
export interface SessionsRead {
  agent: string;
  rows: Promise<SessionRecord[] | null>;
}

/**
 * A token's agent never changes, so once a hub has checked a token it knows whose session rows
 * a request with it will look at, and reads them while the token is checked: one round trip
 * fewer on PostgreSQL. What was read is used only once the check has passed and named that agent.
 */
export class SessionsReadAhead {
  private readonly agents = new Map<string, string>();

  constructor(
    private readonly bus: Bus,
    private readonly env: Env,
  ) {}

  /** Start reading for the token presented, if this hub has checked it before and it gives sessions. */
  start(presented: string | undefined): SessionsRead | null {
    const tokenId = presented === undefined ? null : presentedTokenId(presented);
    const agent = tokenId === null ? undefined : this.agents.get(tokenId);
    if (agent === undefined || !givesSessions(agent, this.env)) return null;
    return { agent, rows: this.bus.sessions.rows(agent).catch(() => null) };
  }

  /** A token that passed its check: remembered, and what was read for it kept only if it names the same agent. */
  checked(token: TokenRecord, read: SessionsRead | null): SessionsRead | null {
    if (this.agents.size >= 10_000) this.agents.clear();
    this.agents.set(token.tokenId, token.agent);
    return read !== null && read.agent === token.agent ? read : null;
  }
}

/**
 * The handle a request's agent name (the NAME_HEADER, its machine's AGENT_BUS_NAME) pins: the name's
 * when it is a session address of the token's client address, else null (the name is ignored).
 */
export function pinnedHandle(token: TokenRecord, named: string | null, env: Env): string | null {
  if (named === null || !givesSessions(token.agent, env) || clientAddressOf(named) !== token.agent) return null;
  return parseNameLenient(named)?.handle ?? null;
}

/**
 * The name a request with `sessionKey` speaks as: the session address it holds, else the token's
 * agent. A conversation not yet held takes the address `pinned` names (see pinnedHandle), if free.
 */
export async function hubSpeaker(
  bus: Bus,
  env: Env,
  token: TokenRecord,
  sessionKey: string | null,
  read: SessionsRead | null = null,
  pinned: string | null = null,
): Promise<{ name: string; key: SessionRowKey } | null> {
  if (sessionKey === null || !givesSessions(token.agent, env)) return null;
  const rows = read !== null && read.agent === token.agent ? await read.rows : null;
  const held = await bus.sessions.hubSession(token.agent, token.repoPath, sessionKey, bus.settings.sessionResumeHours, rows, pinned);
  return { name: held.name, key: held.key };
}

export class HubSession implements ToolSession {
  private storeProblem: string | null = null;
  /** The session address the current request's session id holds, once `ensure` has looked. */
  private held: { name: string; key: SessionRowKey } | null = null;
  /** The conversation id the current request sent (the X-Agent-Bus-Session header), if any. */
  private conversation: string | null = null;
  /** A session of the token's agent the current request speaks as (the hub checked it), else null. */
  private speakAs: string | null = null;
  /** The handle the current request's agent name pins for its conversation (pinnedHandle), else null. */
  private pinned: string | null = null;
  /** How the current request shows the mail it reads: a model's call, or the remote chat or inbox that said so. */
  readWay: ReceiptWay = 'read_inbox';

  constructor(
    private readonly bus: Bus,
    private readonly token: TokenRecord,
    private readonly env: Env,
    /** The agents this hub process has put on the roster already: once each, not at every request. */
    private readonly registered: Set<string>,
  ) {}

  /**
   * A new request: what it asked to speak as (checked by the hub), the session id its headers sent,
   * the surface it said it is, and the handle its agent's name pins.
   */
  begin(speakAs: string | null, conversation: string | null, via: SurfaceWay | null = null, pinned: string | null = null): void {
    this.speakAs = speakAs;
    this.conversation = conversation;
    this.pinned = pinned;
    this.readWay = via ?? 'read_inbox';
    this.held = null;
  }

  get name(): string {
    return this.speakAs ?? this.held?.name ?? this.token.agent;
  }

  get repoPath(): string {
    return this.token.repoPath;
  }

  get holdsSession(): boolean {
    return this.speakAs === null && this.held !== null && this.held.name !== this.token.agent;
  }

  get warnings(): string[] {
    const warnings: string[] = [];
    if (this.speakAs === null && this.held === null && givesSessions(this.token.agent, this.env)) {
      warnings.push(`this call sent no session id (a Codex thread id or an X-Agent-Bus-Session header), so it speaks as ${quoted(this.token.agent)}, the address every session of this client shares`);
    }
    if (this.storeProblem !== null) warnings.push(`${this.storeProblem}; every call tries again`);
    return warnings;
  }

  noteStoreProblem(message: string | null): void {
    this.storeProblem = message;
  }

  async ensure(callKey: string | null): Promise<void> {
    if (this.speakAs === null) {
      this.held = await hubSpeaker(this.bus, this.env, this.token, callKey ?? this.conversation, null, this.pinned);
      if (this.held !== null) return; // Taken (and so on the roster) or held already.
    }
    const name = this.name;
    if (this.registered.has(name)) return;
    await this.bus.roster.register(registrationsFor(name, this.token.repoPath, true));
    this.registered.add(name);
  }

  async rename(label: string): Promise<void> {
    if (this.held === null || !this.holdsSession) {
      throw new InvalidInputError(
        `over the hub ${quoted(this.name)} holds no session address of its own to name (a token for a client address gives one to each session id a client sends); set only a topic, or make a token for the name you want`,
      );
    }
    this.held = { ...this.held, name: await this.bus.sessions.rename(this.held.key, normaliseLabel(label)) };
  }

  clientSessionKey(callKey: string | null): string | null {
    return callKey ?? this.conversation;
  }
}
