/**
 * The identity a running MCP server speaks as, and the session address it
 * holds: taken at start (or, for Codex, at the first tool call, when its
 * thread id is known), renamed by set_session, given up when the server stops.
 */
import { sessionFromEnvironment } from '../clients/profile.js';
import { environmentSessionKey, profileFor } from '../clients/registry/profiles.js';
import type { Bus } from '../core/bus.js';
import { formatStamp, nowMicros } from '../model/clock.js';
import type { Identity } from '../adapters/identity.js';
import { sessionsEnabled } from '../adapters/identity.js';
import { clientAddressOf, normaliseLabel, parseNameLenient } from '../core/names.js';
import { registrationsFor } from '../core/roster.js';
import type { Env } from '../model/settings.js';
import { clientProcessOf, lineageOf, systemProcessTable } from '../adapters/procs.js';
import { InvalidInputError } from '../model/errors.js';
import { rowKeyOf } from '../core/sessions.js';
import type { SessionRowKey } from '../model/records.js';
import type { ToolSession } from './tool-session.js';
import { quoted } from '../model/quote.js';

type AgentIdentity = Extract<Identity, { kind: 'agent' }>;

export class ServerSession implements ToolSession {
  private current: string;
  private key: SessionRowKey | null = null;
  /** The client's id for the conversation this server's session started with, where it had one. */
  private conversationKey: string | null = null;
  private started = false;
  private starting: Promise<void> | null = null;
  private readonly startWarnings: string[];
  /** Why the store could not be used at the last call, until a call gets through again. */
  private storeProblem: string | null = null;
  /** Over stdio every read_inbox is the client's model calling. */
  readonly readWay = 'read_inbox';

  constructor(
    private readonly bus: Bus,
    private readonly identity: AgentIdentity,
    private readonly env: Env,
  ) {
    this.current = identity.name;
    this.startWarnings = [...identity.warnings];
  }

  /** What whoami warns about: how the session started, and a store that cannot be reached right now. */
  get warnings(): string[] {
    const problem = this.storeProblem === null ? [] : [`${this.storeProblem}; every call tries again`];
    return [...this.startWarnings, ...problem];
  }

  /** A call found the store unusable (a server down): whoami says so until a call gets through. */
  noteStoreProblem(message: string | null): void {
    this.storeProblem = message;
  }

  get name(): string {
    return this.current;
  }

  /** The repo this server works in. */
  get repoPath(): string {
    return this.identity.repoPath;
  }

  get clientAddress(): string | null {
    return clientAddressOf(this.current);
  }

  /** Whether this server holds a session address of its own (not a shared or bare name). */
  get holdsSession(): boolean {
    return this.key !== null && this.current !== this.key.clientAddress;
  }

  get sessionKey(): SessionRowKey | null {
    return this.key;
  }

  /**
   * Whether a hook of conversation `key` is this server's session's: the same conversation, or one
   * of the two unknown. Another's (a client that ran one server for several) is looked up instead.
   */
  speaksFor(key: string | null): boolean {
    return key === null || this.conversationKey === null || key === this.conversationKey;
  }

  private get wantsSession(): boolean {
    return this.identity.client !== null && sessionsEnabled(this.env) && parseNameLenient(this.identity.name)?.client != null;
  }

  /** A client whose one process serves many sessions (Codex) tells them apart only by the thread id in each call's metadata: wait for it. */
  get defersStart(): boolean {
    return this.wantsSession && profileFor(this.identity.client).manySessionsPerProcess && !this.startKey();
  }

  /** The conversation id a client puts in its server's environment (Claude Code's session id). */
  private startKey(): string | null {
    return sessionFromEnvironment(profileFor(this.identity.client), this.env);
  }

  /** The client's id for the conversation making a call (Codex's thread id), else the one in the environment (Claude Code's): whose notice receipts count. */
  clientSessionKey(callKey: string | null): string | null {
    return callKey ?? environmentSessionKey(this.env);
  }

  async start(): Promise<void> {
    // Deferred or not, the client address is on the roster from the start, so mail to it is accepted.
    if (this.defersStart) await this.bus.roster.register(registrationsFor(this.identity.name, this.identity.repoPath, true));
    else await this.ensure(null);
  }

  /** Take the session address (once) before serving a call; `callKey` is the client's id for the conversation making it. */
  async ensure(callKey: string | null): Promise<void> {
    if (this.started) return;
    this.starting ??= this.startSession(callKey ?? this.startKey()).catch((error: unknown) => {
      this.starting = null; // A failed start (a busy database, say) is tried again at the next call.
      throw error;
    });
    await this.starting;
  }

  private async startSession(sessionKey: string | null): Promise<void> {
    const { repoPath } = this.identity;
    this.conversationKey = sessionKey;
    if (!this.wantsSession) {
      await this.bus.roster.register(registrationsFor(this.identity.name, repoPath, true));
      this.started = true;
      return;
    }
    const table = systemProcessTable(this.env);
    const me = table.get(process.pid);
    if (!me) {
      this.startWarnings.push('this system does not say which process started this server, so it cannot hold a session address and shares the client address');
      await this.bus.roster.register(registrationsFor(this.identity.name, repoPath, true));
      this.started = true;
      return;
    }
    const lineage = lineageOf(process.pid, table);
    const micros = nowMicros();
    const stamp = formatStamp(micros);
    const clientAddress = this.identity.name;
    const row = {
      serverPid: process.pid,
      serverStarted: me.started,
      clientAddress,
      repoPath,
      lineage: JSON.stringify(lineage),
      sessionKey,
      bootId: table.bootId(),
      pidNs: table.pidNamespace(),
      startedAt: stamp,
      lastSeen: stamp,
    };
    const result = await this.bus.sessions.start(
      { clientAddress, clientProcess: clientProcessOf(lineage), sessionKey, pinned: this.identity.pinnedHandle },
      row,
      { nowMicros: micros, resumeHours: this.bus.settings.sessionResumeHours },
    );
    this.key = rowKeyOf(row);
    this.current = result.name;
    this.startWarnings.push(...result.warnings);
    this.started = true;
  }

  async rename(label: string): Promise<void> {
    if (!this.wantsSession || this.key === null) {
      throw new InvalidInputError(`${quoted(this.current)} is not a session of a client, so it has no session address to name`);
    }
    if (this.current === this.key.clientAddress) {
      throw new InvalidInputError(
        `${quoted(this.current)} is the address every session of this client shares, so a label would rename all of them; set only a topic instead`,
      );
    }
    this.current = await this.bus.sessions.rename(this.key, normaliseLabel(label));
  }

  async release(): Promise<void> {
    await this.starting?.catch(() => undefined);
    if (this.key === null) return;
    const key = this.key;
    this.key = null;
    await this.bus.sessions.end(key);
    // Whoever waits to hear that it ended is told now.
    await this.bus.presence.fireWatches().catch(() => undefined);
  }
}
