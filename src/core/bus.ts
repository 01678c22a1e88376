/**
 * The bus's operations: what every surface (CLI, MCP server, hooks, chat)
 * calls. Each runs one store transaction and, once it has committed,
 * appends its audit rows in a single write.
 */
import { AuditLog } from '../audit/log.js';
import { digestBody, messageRow, type AuditRow, type BodyDigest } from '../audit/record.js';
import { planSend, rosterQueryFor, unknownRecipient, NoSuchRecipient } from './addressing.js';
import { formatStamp, nowMicros, nowStamp } from './clock.js';
import { BusError, InvalidInputError, InvalidNameError } from './errors.js';
import { processAlive } from './liveness.js';
import { clientAddressOf, groupOf, nameProblem, parseNameLenient, BROADCAST } from './names.js';
import { busSettings, type BusSettings } from './settings.js';
import { agentView, messageKind, messageView, type AgentView, type MessageKind, type MessageView } from './views.js';
import type { MessageRecord, ReaderIdentity, Registration, Store } from '../store/types.js';

export const MAX_THREAD_ID_LENGTH = 200;

export interface SendRequest {
  from: string;
  to: string;
  body: string;
  threadId?: string | null;
  /** Roster rows to write in the send's transaction (the speaker registering itself). */
  register?: Registration[];
  /** Names besides the sender that this send must not reach. */
  skip?: string[];
}

export interface SendResult {
  to: string;
  kind: MessageKind;
  message_ids: string[];
  recipients: string[];
  thread_id: string | null;
  sent_at: string;
  message_id?: string;
}

export interface ReadRequest {
  reader: string;
  markRead?: boolean;
  limit?: number;
  actionableOnly?: boolean;
  /** The mail is being handed to its reader's model or screen: audit a `deliver` row per message. */
  deliver?: boolean;
}

export interface ForgetResult {
  name: string;
  removed: boolean;
  pending: number;
}

export function readerIdentity(name: string): ReaderIdentity {
  const parsed = parseNameLenient(name);
  return {
    name,
    group: parsed?.group ?? groupOf(name),
    clientAddress: clientAddressOf(name),
    isSession: parsed !== null && parsed.handle !== null,
  };
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export class Bus {
  readonly settings: BusSettings;

  constructor(
    readonly store: Store,
    readonly audit: AuditLog,
    settings: BusSettings = busSettings(),
  ) {
    this.settings = settings;
  }

  private validateSend(request: SendRequest): { to: string; threadId: string | null } {
    const to = request.to.trim();
    if (to === '') throw new InvalidInputError("to must be non-empty (use '*' to broadcast)");
    if (request.body.trim() === '') throw new InvalidInputError('body must be non-empty');
    const size = utf8Length(request.body);
    if (size > this.settings.maxBodyBytes) {
      throw new InvalidInputError(
        `body is ${size} bytes; the limit is ${this.settings.maxBodyBytes} bytes (AGENT_BUS_MAX_BODY_BYTES). Nothing was sent.`,
      );
    }
    const threadId = request.threadId ?? null;
    if (threadId !== null && (threadId.trim() === '' || threadId.length > MAX_THREAD_ID_LENGTH)) {
      throw new InvalidInputError(`thread id must be 1 to ${MAX_THREAD_ID_LENGTH} characters`);
    }
    return { to, threadId };
  }

  async send(request: SendRequest): Promise<SendResult> {
    const { to, threadId } = this.validateSend(request);
    const micros = nowMicros();
    const sentAt = formatStamp(micros);
    const skip = new Set([request.from, ...(request.skip ?? [])]);
    let records: MessageRecord[];
    try {
      records = await this.store.send({
        register: request.register ?? [],
        from: request.from,
        addressedTo: to,
        body: request.body,
        sentAt,
        roster: rosterQueryFor(to),
        plan: (candidates) =>
          planSend(candidates, { to, skip, threadId, nowMicros: micros, fanoutMaxIdleDays: this.settings.fanoutMaxIdleDays }),
      });
    } catch (error) {
      if (!(error instanceof NoSuchRecipient)) throw error;
      if (to !== BROADCAST && to.includes('/')) {
        const problem = nameProblem(to);
        if (problem !== null) throw new InvalidNameError(`invalid recipient: ${problem}. Nothing was sent.`);
      }
      const { agents } = await this.store.roster();
      throw unknownRecipient(to, agents);
    }
    if (records.length > 0) {
      const digest = digestBody(request.body);
      this.audit.append(records.map((record) => messageRow('send', sentAt, request.from, record, digest)));
    }
    const kind: MessageKind = records[0] ? messageKind(records[0]) : to === BROADCAST ? 'broadcast' : 'group';
    const result: SendResult = {
      to,
      kind,
      message_ids: records.map((record) => record.messageId),
      recipients: records.map((record) => record.toAgent),
      thread_id: records[0]?.threadId ?? threadId,
      sent_at: sentAt,
    };
    if (records.length === 1 && records[0]) result.message_id = records[0].messageId;
    return result;
  }

  async readInbox(request: ReadRequest): Promise<MessageView[]> {
    const limit = request.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 0) throw new InvalidInputError(`limit must be a whole number ≥ 0, got ${limit}`);
    const now = nowStamp();
    const outcome = await this.store.readInbox({
      reader: readerIdentity(request.reader),
      markRead: request.markRead ?? true,
      limit,
      actionableOnly: request.actionableOnly ?? false,
      now,
    });
    if (request.markRead ?? true) {
      const rows: AuditRow[] = [];
      for (const message of outcome.messages) {
        const digest: BodyDigest = digestBody(message.body);
        rows.push(messageRow('read', now, request.reader, message, digest));
        if (request.deliver) rows.push(messageRow('deliver', now, request.reader, message, digest));
        if (outcome.contestedClaims.has(message.messageId)) rows.push(messageRow('claim', now, request.reader, message, digest));
      }
      this.audit.append(rows);
    }
    return outcome.messages.map(messageView);
  }

  async pendingCount(reader: string): Promise<number> {
    return this.store.pendingCount(readerIdentity(reader));
  }

  async register(registrations: Registration[]): Promise<void> {
    await this.store.register(registrations, nowStamp());
  }

  /** The roster with pending counts and session liveness, ordered by name; optionally one repo. */
  async agents(group?: string): Promise<AgentView[]> {
    const snapshot = await this.store.roster();
    const live = new Set<string>();
    for (const holder of snapshot.sessionHolders) if (processAlive(holder.serverPid)) live.add(holder.name);
    return snapshot.agents
      .filter((agent) => group === undefined || (agent.groupName ?? groupOf(agent.name)) === group)
      .map((agent) => agentView(agent, snapshot.pending.get(agent.name) ?? 0, live.has(agent.name)));
  }

  async forget(name: string): Promise<ForgetResult> {
    if (!name.includes('/')) {
      const mates = (await this.store.groupMembers(name)).filter((agent) => agent.name !== name).map((agent) => agent.name);
      if (mates.length > 0) {
        throw new BusError(
          `'${name}' is a repo with ${mates.length} agent(s): ${mates.join(', ')}. ` +
            `Forget one by its full name, or all of them with \`agent-bus forget --group ${name}\`.`,
        );
      }
    }
    const outcome = await this.store.forget(name);
    return { name, ...outcome };
  }

  async forgetGroup(group: string): Promise<string[]> {
    return this.store.forgetGroup(group);
  }

  async thread(threadId: string, limit = 100): Promise<MessageView[]> {
    return (await this.store.thread(threadId, limit)).map(messageView);
  }

  async recentMessages(limit = 10): Promise<MessageView[]> {
    return (await this.store.recentMessages(limit)).map(messageView);
  }

  async close(): Promise<void> {
    this.audit.close();
    await this.store.close();
  }
}
