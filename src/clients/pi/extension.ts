/**
 * agent-bus inside Pi: what the extension init writes (`.pi/extensions/agent-bus.ts`) loads from the
 * installed agent-bus, so it runs agent-bus's own code and MCP client, never the repo's. Pi has no MCP
 * and no hook files, so for each session this:
 * - starts the session's `agent-bus serve --client pi` over stdio (a relay to the hub where init
 *   --remote named one), and offers its tools to the model as Pi's own;
 * - answers Pi's events through the server's `client_hook` tool, so the rules, receipts and loop
 *   guard are the command hooks' own: `session_start` (notices), `before_agent_start` (mail and
 *   notices, as a message of the turn), `tool_call` (a write of a file another agent holds is
 *   blocked with the reason; urgent mail and critical notices are steered in before the next model
 *   call), `turn_end` with no tool call left (mail to act on is sent as a follow-up that starts
 *   another turn; the stop hook counts those turns), `session_shutdown` (the session ends);
 * - where the session takes prompts from outside (interactive and RPC modes), opens an inbox socket
 *   the server posts a nudge to when mail comes while the session is idle: the nudge starts a turn.
 * Nothing here ever fails Pi's turn: a bus that cannot be reached leaves the session as it was.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HOOK_TOOL } from '../../protocol/tool-names.js';
import type { HookKind } from '../../model/hooks.js';
import { openInboxSocket, type InboxSocket } from './inbox-socket.js';
import { piProfile } from './profile.js';

/** What the extension file hands over: the agent-bus it found, and what init wrote into it. */
export interface PiOptions {
  /** The agent-bus executable the extension found (on PATH, or as init named it). */
  bin: string;
  /** The repo's default subscriptions (the file's CHANNELS line). */
  channels: string;
  /** The hub's URL (init --remote), or null for this machine's bus. */
  hub: string | null;
}

// ------------------------------------------------------------------ the part of Pi's extension API used here

type Content = { type: string; text?: string; [key: string]: unknown };

interface PiMessage {
  role?: string;
  content?: unknown;
  stopReason?: string;
}

interface PiContext {
  cwd: string;
  hasUI: boolean;
  isIdle(): boolean;
  hasPendingMessages(): boolean;
  sessionManager: { getSessionId(): string };
}

interface CustomMessage {
  customType: string;
  content: string;
  display: boolean;
}

export interface PiApi {
  on(event: string, handler: (event: Record<string, unknown>, ctx: PiContext) => unknown): void;
  registerTool(tool: {
    name: string;
    label: string;
    description: string;
    promptSnippet?: string;
    parameters: unknown;
    execute(toolCallId: string, params: unknown, signal?: AbortSignal): Promise<{ content: Content[]; details: unknown }>;
  }): void;
  sendMessage(message: CustomMessage, options?: { triggerTurn?: boolean; deliverAs?: 'steer' | 'followUp' | 'nextTurn' }): void;
  sendUserMessage(content: string, options?: { deliverAs?: 'steer' | 'followUp' }): void;
}

// ------------------------------------------------------------------ the bridge

/** The custom message type the bus's context goes into the session as. */
export const MESSAGE_TYPE = 'agent-bus';

const HOOK_TIMEOUT_MS = Number(process.env.AGENT_BUS_HOOK_TIMEOUT_MS) || 10_000;
/** How long Pi's start waits for the server to answer: past it, the session goes on without the bus. */
const START_TIMEOUT_MS = 20_000;

/** A hook's answer, as the server prints it for a tool call (jsonDialect). */
interface HookAnswer {
  decision?: string;
  reason?: string;
  hookSpecificOutput?: { additionalContext?: string; permissionDecision?: string; permissionDecisionReason?: string };
}

/** The text of a tool result's content blocks. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as Content[]).map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('\n');
}

/** Whether an assistant message asks for a tool call (its turn goes on). */
function callsATool(message: PiMessage | undefined): boolean {
  return Array.isArray(message?.content) && (message.content as Content[]).some((part) => part.type === 'toolCall');
}

/** The environment of the session's server: Pi's, with what says which session it serves and where its inbox is. */
function serverEnv(options: PiOptions, sessionId: string, socket: InboxSocket | null): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  env.AGENT_BUS_DEFAULT_CHANNELS = options.channels;
  if (piProfile.sessionVariable !== null) env[piProfile.sessionVariable] = sessionId;
  if (options.hub !== null) env.AGENT_BUS_URL = options.hub;
  const wake = piProfile.wake.kind === 'watch' ? piProfile.wake.socket : null;
  if (socket !== null && wake !== null) {
    env[wake.path] = socket.path;
    env[wake.token] = socket.token;
  }
  return env;
}

/** One session's link to the bus: its server, and the inbox socket where it has one. */
class BusLink {
  private readonly client = new Client({ name: 'agent-bus-pi', version: '1' });
  private connected = false;
  /** What the session-start hook said, shown with the first prompt. */
  sessionStartText: string | null = null;

  constructor(
    private readonly options: PiOptions,
    private readonly sessionId: string,
    private readonly cwd: string,
    readonly socket: InboxSocket | null,
  ) {}

  async connect(): Promise<void> {
    const transport = new StdioClientTransport({
      command: this.options.bin,
      args: ['serve', '--client', piProfile.id],
      cwd: this.cwd,
      env: serverEnv(this.options, this.sessionId, this.socket),
      // The server's diagnostics must not write over Pi's screen.
      stderr: 'ignore',
    });
    await this.client.connect(transport, { timeout: START_TIMEOUT_MS });
    this.connected = true;
  }

  get instructions(): string | undefined {
    return this.client.getInstructions();
  }

  async tools(): Promise<Array<{ name: string; description?: string; inputSchema: unknown }>> {
    const listed = await this.client.listTools(undefined, { timeout: START_TIMEOUT_MS });
    // The hook tool answers this extension, never the model.
    return listed.tools.filter((tool) => tool.name !== HOOK_TOOL);
  }

  call(name: string, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
    return this.client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, signal ? { signal } : {}) as Promise<CallToolResult>;
  }

  /** Ask the session's server one hook; nothing (an empty answer) when it cannot be asked. */
  async hook(kind: HookKind, fields: Record<string, unknown> = {}): Promise<HookAnswer> {
    if (!this.connected) return {};
    try {
      const result = (await this.client.callTool(
        { name: HOOK_TOOL, arguments: { kind, default_channels: this.options.channels, session_id: this.sessionId, cwd: this.cwd, ...fields } },
        undefined,
        { timeout: HOOK_TIMEOUT_MS },
      )) as CallToolResult;
      const text = textOf(result.content).trim();
      return text.startsWith('{') ? (JSON.parse(text) as HookAnswer) : {};
    } catch {
      return {};
    }
  }

  async close(): Promise<void> {
    await this.client.close().catch(() => undefined);
    await this.socket?.close().catch(() => undefined);
  }
}

/** Context for the model from a hook's answer, or null. */
function contextOf(answer: HookAnswer): string | null {
  const text = answer.hookSpecificOutput?.additionalContext;
  return typeof text === 'string' && text.trim() !== '' ? text : null;
}

/** Offer the server's tools to Pi's model under their own names; a tool's error is thrown, as Pi wants it. */
async function registerTools(pi: PiApi, link: BusLink): Promise<void> {
  for (const tool of await link.tools()) {
    const description = tool.description ?? tool.name;
    pi.registerTool({
      name: tool.name,
      label: tool.name,
      description,
      promptSnippet: description.split('\n')[0],
      parameters: tool.inputSchema,
      async execute(_toolCallId, params, signal) {
        const result = await link.call(tool.name, params ?? {}, signal);
        const content = (Array.isArray(result.content) ? result.content : []).map((part): Content =>
          part.type === 'text' || part.type === 'image' ? (part as Content) : { type: 'text', text: JSON.stringify(part) },
        );
        if (result.isError) throw new Error(textOf(content) || `${tool.name} failed`);
        return { content, details: {} };
      },
    });
  }
}

/**
 * Whether the agent's runs have settled: none under way (seen from its first model request to its
 * agent_end, which Pi hands the extension after the run's turn_end), and none the stop hook has started
 * that has not begun yet.
 */
export class RunTracker {
  private running = false;
  private starting = false;

  started(): void {
    this.running = true;
    this.starting = false;
  }

  ended(): void {
    this.running = false;
  }

  /** The stop hook sent a follow-up that starts a run. */
  triggered(): void {
    this.starting = true;
  }

  /** Resolves once no run is under way or about to start and Pi says it is idle, or after `limitMs`. */
  async settled(idle: () => boolean, limitMs = 30 * 60_000, everyMs = 25): Promise<void> {
    const deadline = Date.now() + limitMs;
    while ((this.running || this.starting || !idle()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Wire agent-bus into one Pi process: called by the extension file with the agent-bus it found. */
export function activate(pi: PiApi, options: PiOptions): void {
  // Commands the agent runs in Pi's bash tool (a git commit's guard) are known as this client's.
  process.env.AGENT_BUS_CLIENT = piProfile.id;
  if (options.hub !== null) process.env.AGENT_BUS_URL = options.hub;
  let link: BusLink | null = null;
  let context: PiContext | null = null;
  const runs = new RunTracker();

  pi.on('session_start', async (_event, ctx) => {
    context = ctx;
    // Only a session that takes prompts from outside can be woken: print and JSON modes end with their prompt.
    const socket = ctx.hasUI
      ? await openInboxSocket((text) => {
          try {
            // A nudge is a user's line: at idle it starts a turn, whose prompt hook shows the mail.
            pi.sendUserMessage(text, context?.isIdle() === false ? { deliverAs: 'followUp' } : undefined);
          } catch {
            // The session is closing.
          }
        }).catch(() => null)
      : null;
    const started = new BusLink(options, ctx.sessionManager.getSessionId(), ctx.cwd, socket);
    try {
      await started.connect();
      await registerTools(pi, started);
    } catch (error) {
      await started.close();
      process.stderr.write(`agent-bus: could not start the bus's server (${(error as Error).message}): this Pi session is not on the bus\n`);
      return;
    }
    link = started;
    link.sessionStartText = contextOf(await link.hook('session-start', { hook_event_name: 'session_start' }));
  });

  pi.on('before_agent_start', async (event) => {
    if (link === null) return undefined;
    const prompt = contextOf(await link.hook('prompt', { hook_event_name: 'before_agent_start' }));
    const text = [link.sessionStartText, prompt].filter((part): part is string => part !== null).join('\n\n');
    link.sessionStartText = null;
    const instructions = link.instructions;
    const systemPrompt = typeof event.systemPrompt === 'string' && instructions ? `${event.systemPrompt}\n\n${instructions}` : undefined;
    return {
      ...(text === '' ? {} : { message: { customType: MESSAGE_TYPE, content: text, display: true } }),
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
    };
  });

  // Never throws: a tool_call handler that fails blocks the call.
  pi.on('tool_call', async (event) => {
    if (link === null) return undefined;
    try {
      const answer = await link.hook('pre-tool', { hook_event_name: 'tool_call', tool_name: event.toolName, tool_input: event.input });
      const output = answer.hookSpecificOutput;
      if (output?.permissionDecision === 'deny' && typeof output.permissionDecisionReason === 'string') {
        return { block: true, reason: output.permissionDecisionReason };
      }
      const text = contextOf(answer);
      // Steered in after this call's tools have run, before the model's next request.
      if (text !== null) pi.sendMessage({ customType: MESSAGE_TYPE, content: text, display: true }, { deliverAs: 'steer' });
    } catch {
      // The tool runs without the bus's notices.
    }
    return undefined;
  });

  // Pi does not wait for turn_end's handlers before it ends the run: by the time the stop hook has
  // answered, the run is over, and the follow-up starts a new one (triggerTurn).
  pi.on('context', () => {
    runs.started();
    return undefined;
  });
  pi.on('agent_end', () => runs.ended());

  pi.on('turn_end', async (event, ctx) => {
    const message = event.message as PiMessage | undefined;
    // Only the turn the agent would stop after: no tool call left, not aborted or failed, nothing queued.
    if (link === null || message?.role !== 'assistant' || callsATool(message)) return;
    if (message.stopReason === 'aborted' || message.stopReason === 'error' || ctx.hasPendingMessages()) return;
    const answer = await link.hook('stop', { hook_event_name: 'turn_end', last_assistant_message: textOf(message.content) });
    if (answer.decision === 'block' && typeof answer.reason === 'string' && answer.reason.trim() !== '') {
      runs.triggered();
      pi.sendMessage({ customType: MESSAGE_TYPE, content: answer.reason, display: true }, { triggerTurn: true, deliverAs: 'followUp' });
    }
  });

  pi.on('session_shutdown', async (_event, ctx) => {
    // Print mode quits as soon as its prompt's run is over: a turn the stop hook started for mail (the
    // mail taken, and shown to the model in it) is let finish first. A person who quits is not held.
    if (!ctx.hasUI) await runs.settled(() => ctx.isIdle());
    const ending = link;
    link = null;
    if (ending === null) return;
    await ending.hook('session-end', { hook_event_name: 'session_shutdown' });
    await ending.close();
  });
}
