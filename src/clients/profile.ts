/**
 * What agent-bus knows about one client, as data: the hooks, the MCP server,
 * wake, the status line, doctor and init read these facts rather than ask
 * which client it is. Each client's profile is `clients/<id>/profile.ts`;
 * what init writes for it is `clients/<id>/wiring.ts`. Hooks start a fresh
 * process at every turn, so a profile imports nothing but its dialect's parts:
 * the wiring code and its config-file parsers stay out of the hooks' bundles.
 */
import type { HOOK_COMMAND_KINDS } from '../model/hooks.js';
import type { Env, SettingOfKind } from '../model/settings.js';
import { commonDialect, type HookDialect } from './dialect.js';
import type { WrittenFiles } from './writes.js';

/** The agent-bus commands a client's hook events run. */
export type HookCommand = keyof typeof HOOK_COMMAND_KINDS;

/** One of a client's hook events, the command it runs, and (where the client filters an event's kinds) its matcher. */
export type HookEvent = readonly [event: string, command: HookCommand, matcher?: string];

/** How an idle session of the client is woken when mail arrives for it. */
export type WakeWay =
  /**
   * A background `agent-bus hook-watch`, started by the client's own hooks (or plugin), waits for the
   * mail and starts a turn. `interactive`: the variable that says a session is interactive, when the
   * client would wait for background hooks in the foreground otherwise (so only those are watched).
   */
  | {
      kind: 'watch';
      /** What starts its watcher: the client's own hooks, or the plugin init writes for it. */
      startedBy: 'hook' | 'plugin';
      interactive: { variable: string; value: string } | null;
      /**
       * The variables in which the client gives the processes it starts its session's inbox socket, where
       * it has one: its MCP server posts a nudge there when mail arrives for an idle session, and no
       * hook-watch process runs while it does.
       */
      socket: { path: string; token: string; frame?: 'qwen' } | null;
    }
  /**
   * The sender queues a turn for an idle session by its thread id, running the client's executable
   * (`executableVariable` overrides the one the session's hooks noted, then `executable`).
   * Its hooks note that route at every turn.
   */
  | { kind: 'queue'; executable: string; executableVariable: SettingOfKind<'text'>; queueArgs(threadId: string, message: string): string[] }
  | { kind: 'none' };

export type QueueWake = Extract<WakeWay, { kind: 'queue' }>;

/** One settings file whose `env` block the client merges into the environment it gives its hooks. */
export interface SettingsFile {
  layer: 'repo-local' | 'repo' | 'user';
  /** The file's path under the repo, or under the user's home folder. */
  path: string;
  under: 'repo' | 'home';
}

/** Where a client's sessions may take their subscriptions from, besides the environment. */
export interface SettingsFiles {
  /** Highest precedence first. */
  files: readonly SettingsFile[];
  /** The variable in which the client names the project whose files it merged. */
  projectVariable: string;
  /** Variables the client sets in the processes it starts: where one is set, its files apply. */
  markers: readonly string[];
}

export interface ClientProfile {
  /** The client part of its agents' names (`repo/claude`), and the hooks' `--client`. */
  readonly id: string;
  /** Its name for people. */
  readonly name: string;
  /** The command a person types to start it in a repo (init's next step). */
  readonly command: string;
  /** The config files init owns a part of, under the repo. */
  readonly configFiles: readonly string[];
  /** Its hook events (or its plugin's), in the order init writes them, each with the command it runs. */
  readonly hookEvents: readonly HookEvent[];
  /** Whether it runs hook-pre-tool before tool calls: without it, the brain's refresh cadence counts turns. */
  readonly preToolEvent: boolean;
  /**
   * Where the client runs the pre-tool hook twice a tool call, because no one event can both refuse
   * the call and show the model context (Gemini CLI): the event at which it refuses writes, and the
   * one whose context reaches the model. Null: one event does both.
   */
  readonly preToolSplit?: { readonly guard: string; readonly context: string } | null;
  /**
   * Whether the client sets no limit on the turns its stop hook starts in a row (Gemini CLI's AfterAgent):
   * the hook counts them itself, and stops at AGENT_BUS_STOP_KEEPS.
   */
  readonly stopKeepsCounted?: boolean;
  /**
   * Where the client runs its prompt hook again on its own sends (Qwen Code's UserPromptSubmit fires
   * on each send of tool results and on a continuation): whether a payload is such a send, no prompt
   * of a person's or the bus's. The hook answers nothing there: mail that comes during a turn waits
   * for the stop hook (urgent mail for the next tool call), as in every other client.
   */
  readonly promptResent?: ((payload: Record<string, unknown>) => boolean) | null;
  /** The files a tool call is about to write, from its pre-tool hook's payload; null where the hook is not told. */
  readonly writtenFiles: WrittenFiles | null;
  readonly dialect: HookDialect;
  /** The variable in which it gives its hooks and its MCP server the conversation's id, if any. */
  readonly sessionVariable: string | null;
  /**
   * A variable it sets only in the MCP servers it starts, where it also reads another client's config
   * (Copilot CLI reads Claude Code's `.mcp.json`): a server configured for that other client that
   * finds it set speaks for this client instead.
   */
  readonly serverMarker?: string | null;
  /**
   * How a command its agent runs in its shell tool (a git hook at commit) knows the client: variables the
   * shell tool sets, and the one of them naming the session; null when it sets none.
   */
  readonly shell: { readonly markers: readonly string[]; readonly sessionVariable: string | null } | null;
  /**
   * Whether one client process hosts many sessions (Codex runs every thread's server from one
   * process): its hooks are matched to a session by session id alone, and its MCP server learns
   * which session it serves from the first call's metadata.
   */
  readonly manySessionsPerProcess: boolean;
  readonly wake: WakeWay;
  /** How it names an MCP tool for pre-approval; null when it approves the server whole, or nothing. */
  readonly approvedToolName: ((server: string, tool: string) => string) | null;
  /**
   * The process the client runs agent-bus's hooks under, between itself and them (Cline's plugin
   * sandbox, `node`): a hook skips it when it looks for its client process, so it finds the session its
   * client's server holds. Absent: the hooks' first ancestor that is not a shell is the client.
   */
  readonly hookHost?: string;
  /** What agent-bus does for other clients and cannot do for this one, each said plainly by doctor; absent: nothing. */
  readonly limits?: readonly string[];
  /** Commands the client runs agent-bus's part with, found on PATH (Cline's plugin sandbox runs `node`): doctor checks them. */
  readonly needsOnPath?: readonly { readonly command: string; readonly why: string }[];
  /** The oldest Node.js it runs on, where that is newer than agent-bus's own (doctor checks the node its executable starts with). */
  readonly needsNode?: readonly number[] | null;
  /** Its settings files that may set a session's subscriptions; null when only the environment does. */
  readonly settings: SettingsFiles | null;
  /**
   * Where the client's own extension asks the session's server every hook (`client_hook`), with no hook
   * file and no process per hook (Pi): doctor checks that extension, not hook entries.
   */
  readonly hooksByServer?: boolean;
  /**
   * Where the client can call a tool of the session's own MCP server as a hook (`mcp_tool`), with no
   * process: from which of its versions, the executable asked for its version, and the hook commands
   * that stay commands (an event it will not route to a server, or one that comes once its server is
   * gone). Absent: command hooks only.
   */
  readonly hookTools?: {
    readonly minVersion: readonly number[];
    readonly executable: { readonly variable: SettingOfKind<'text'>; readonly fallback: string };
    readonly commandOnly: readonly HookCommand[];
  } | null;
}

/** A client agent-bus has no profile for: the common dialect, and none of the facts above. */
export const UNKNOWN_CLIENT: ClientProfile = {
  id: '',
  name: 'an unknown client',
  command: '',
  configFiles: [],
  hookEvents: [],
  preToolEvent: true,
  writtenFiles: null,
  dialect: commonDialect,
  sessionVariable: null,
  shell: null,
  manySessionsPerProcess: false,
  wake: { kind: 'none' },
  approvedToolName: null,
  settings: null,
};

/** Which part of its work a pre-tool hook does: refuse writes, show context, or (one event for both) all of it. */
export type PreToolPart = 'guard' | 'context' | 'both';

/**
 * The pre-tool hook's part for the event its payload names: a client that splits the hook (see
 * preToolSplit) has the context shown only where the model sees it, and the writes checked only
 * where a call can be refused. A payload that names neither event is only checked: no text is
 * taken as shown that may never reach the model.
 */
export function preToolPartOf(profile: ClientProfile, payload: Record<string, unknown>): PreToolPart {
  const split = profile.preToolSplit ?? null;
  if (split === null) return 'both';
  return payload.hook_event_name === split.context ? 'context' : 'guard';
}

/** Whether a hook of `kind` has nothing to answer for this payload: a prompt hook run on the client's own send (ClientProfile.promptResent). */
export function nothingToAnswer(profile: ClientProfile, kind: string, payload: Record<string, unknown>): boolean {
  return kind === 'prompt' && (profile.promptResent?.(payload) ?? false);
}

/** The conversation id the client put in this process's environment, if it does. */
export function sessionFromEnvironment(profile: ClientProfile, env: Env): string | null {
  return profile.sessionVariable === null ? null : (env[profile.sessionVariable] ?? '').trim() || null;
}

/** The project whose settings files the client merged, as it names it, or null. */
export function settingsProject(profile: ClientProfile, env: Env): string | null {
  return profile.settings === null ? null : (env[profile.settings.projectVariable] ?? '').trim() || null;
}
