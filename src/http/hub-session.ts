/**
 * The identity of one hub request: the agent its token speaks for, and nothing
 * the request says. A token's agent may be a client address (`repo/claude`):
 * over the hub its calls speak as that address.
 */
import type { Bus } from '../core/bus.js';
import { registrationsFor } from '../core/roster.js';
import { InvalidInputError } from '../model/errors.js';
import type { TokenRecord } from '../model/records.js';
import type { ToolSession } from '../mcp/tool-session.js';

export class HubSession implements ToolSession {
  readonly holdsSession = false;
  private storeProblem: string | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly token: TokenRecord,
    /** The agents this hub process has put on the roster already: once each, not at every request. */
    private readonly registered: Set<string>,
  ) {}

  /** The conversation id the current request sent (the X-Agent-Bus-Session header), if any. */
  conversation: string | null = null;
  /** A session of the token's agent the current request speaks as (the hub checked it), else null. */
  speakAs: string | null = null;

  get name(): string {
    return this.speakAs ?? this.token.agent;
  }

  get repoPath(): string {
    return this.token.repoPath;
  }

  get warnings(): string[] {
    return this.storeProblem === null ? [] : [`${this.storeProblem}; every call tries again`];
  }

  noteStoreProblem(message: string | null): void {
    this.storeProblem = message;
  }

  async ensure(): Promise<void> {
    const name = this.name;
    if (this.registered.has(name)) return;
    await this.bus.register(registrationsFor(name, this.token.repoPath, true));
    this.registered.add(name);
  }

  async rename(): Promise<void> {
    throw new InvalidInputError(`over the hub '${this.name}' is the name its token speaks for, so it takes no label; set only a topic, or make a token for the name you want`);
  }

  clientSessionKey(callKey: string | null): string | null {
    return callKey ?? this.conversation;
  }
}
