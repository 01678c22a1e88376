/**
 * The Cline plugin `agent-bus init` generates (`.cline/plugins/agent-bus.js`). Cline's hook files
 * cannot refuse one tool call (`cancel` ends the run) and its prompt hook's output is dropped, so the
 * plugin runs the hook commands itself, at the points of Cline's runtime that can:
 * - `beforeRun`, each run's start: `hook-session-start` once, then `hook-user-prompt` (mail, then
 *   notices); Cline appends the text as context to the run's first model request;
 * - `beforeTool`, each tool call: `hook-pre-tool` with the call (its name and input), whose text Cline
 *   shows after the tool's result; a write of a file another agent holds comes back as
 *   `{"decision":"deny","reason":…}` and the call is skipped, the reason the tool's error (`skip`, never
 *   `stop`: the run goes on);
 * - `submit_and_exit`, the tool that ends a headless run: `hook-stop`, and while mail waits to be acted
 *   on, the call is skipped with the mail as its reason, so the agent works on (the hook counts the
 *   stops it refuses in a row and lets the run end past AGENT_BUS_STOP_KEEPS);
 * - `afterRun`: `hook-stop --peek`, which takes nothing and notes the session idle when no mail waits
 *   (an interactive run ends at a reply, where nothing holds it).
 * A subagent's calls are left alone: its parent takes the mail. The subscriptions (CHANNELS) are the
 * one line a user edits; init keeps it. The plugin is committed with the repo: it runs the bare
 * `agent-bus` and names no agent; each hook finds its agent from `--client cline` and the folder.
 */
import { PLUGIN_MARKER, pluginChannels } from '../opencode/plugin.js';

/** The subscriptions in a plugin init wrote earlier (perhaps edited since), or null: its CHANNELS line is opencode's plugin's. */
export const clinePluginChannels = pluginChannels;

/** The first line of a plugin init wrote: opencode's plugin's. */
export const CLINE_PLUGIN_MARKER = PLUGIN_MARKER;

/** The tool whose successful call ends a headless Cline run. */
export const CLINE_SUBMIT_TOOL = 'submit_and_exit';

/** The plugin's source, with the command, subscriptions and hub embedded as JSON literals (never spliced into a shell). */
export function clinePluginSource(bin: string, channels: string, remote: string | null = null): string {
  // The hub's variable is named only in a plugin wired to one: doctor reads a plugin that names it as a hub's.
  return `${CLINE_PLUGIN_MARKER}
// agent-bus for Cline: shows new mail and notices to the model, refuses writes of files other agents hold,
// and keeps a headless run working while mail waits.
import { spawn } from 'node:child_process';

// The notice channels this repo's sessions receive (comma-separated; * for all; empty for global notices only),
// unless Cline was started with AGENT_BUS_CHANNELS, which wins.
const CHANNELS = ${JSON.stringify(channels)};
const BIN = ${JSON.stringify(bin)};
// The hub this repo's sessions reach (init --remote), or null for this machine's bus. The token is $AGENT_BUS_TOKEN.
const HUB = ${JSON.stringify(remote)};
const TIMEOUT_MS = Number(process.env.AGENT_BUS_HOOK_TIMEOUT_MS) || 10000;
const SUBMIT = ${JSON.stringify(CLINE_SUBMIT_TOOL)};

let folder = process.cwd();
let sessionId = null;
const started = new Set();
const stuck = new Set();

// Run one hook with the payload on stdin; never throws, never waits past TIMEOUT_MS, never restarts one still stuck.
const run = (subcommand, payload, flags = []) => {
  if (stuck.has(subcommand)) return Promise.resolve('');
  return new Promise((resolve) => {
    let out = '';
    let done = false;
    const finish = (text) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(text.trim());
    };
    let child;
    try {
      child = spawn(BIN, [subcommand, '--client', 'cline', ...flags], {
        cwd: folder,
        env: { ...process.env, ${remote ? 'AGENT_BUS_URL: HUB, ' : ''}AGENT_BUS_DEFAULT_CHANNELS: CHANNELS },
        stdio: ['pipe', 'pipe', 'ignore'],
      });
    } catch {
      return finish('');
    }
    stuck.add(subcommand);
    // Past the time, its output is closed: a hook that has not printed yet then cannot, and gives its mail back.
    const timer = setTimeout(() => {
      child.stdout.destroy();
      finish(out);
    }, TIMEOUT_MS);
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', () => {
      stuck.delete(subcommand);
      finish('');
    });
    child.on('close', () => {
      stuck.delete(subcommand);
      finish(out);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify({ cwd: folder, ...payload }));
  });
};

// The core session's id (what \`cline --id\` resumes), else the conversation's.
const sessionOf = (snapshot) => sessionId || snapshot?.conversationId || null;
const isSubagent = (snapshot) => Boolean(snapshot?.parentAgentId);
const decisionOf = (text) => {
  if (!text.startsWith('{')) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
};

export default {
  name: 'agent-bus',
  manifest: { capabilities: ['hooks'] },
  setup(_api, ctx) {
    if (ctx?.workspaceInfo?.rootPath) folder = ctx.workspaceInfo.rootPath;
    if (ctx?.session?.sessionId) sessionId = ctx.session.sessionId;
  },
  hooks: {
    async beforeRun({ snapshot }) {
      try {
        if (isSubagent(snapshot)) return undefined;
        const session_id = sessionOf(snapshot);
        const parts = [];
        if (!started.has(session_id)) {
          started.add(session_id);
          parts.push(await run('hook-session-start', { session_id, hook_event_name: 'SessionStart' }));
        }
        parts.push(await run('hook-user-prompt', { session_id, hook_event_name: 'UserPromptSubmit' }));
        const text = parts.filter(Boolean).join('\\n\\n');
        return text ? { appendContext: text } : undefined;
      } catch {
        return undefined;
      }
    },
    async beforeTool({ snapshot, toolCall, tool, input }) {
      try {
        if (isSubagent(snapshot)) return undefined;
        const session_id = sessionOf(snapshot);
        const name = tool?.name ?? toolCall?.toolName ?? null;
        if (name === SUBMIT) {
          // Mail to act on keeps the run going: the model reads it as the reason its submit was not taken.
          const decision = decisionOf(await run('hook-stop', { session_id, hook_event_name: 'Stop' }));
          return decision?.decision === 'block' && typeof decision.reason === 'string' ? { skip: true, reason: decision.reason } : undefined;
        }
        const text = await run('hook-pre-tool', { session_id, hook_event_name: 'PreToolUse', tool_name: name, tool_input: input ?? null });
        const decision = decisionOf(text);
        if (decision?.decision === 'deny' && typeof decision.reason === 'string') return { skip: true, reason: decision.reason };
        return text ? { appendContext: text } : undefined;
      } catch {
        return undefined;
      }
    },
    // A run that ended at a reply (an interactive one) is idle until its next prompt: the stop hook only
    // looks (--peek takes no mail), which notes the session idle when no mail waits for it.
    async afterRun({ snapshot }) {
      try {
        if (!isSubagent(snapshot)) await run('hook-stop', { session_id: sessionOf(snapshot), hook_event_name: 'Stop' }, ['--peek']);
      } catch {
        // Presence stays as it was.
      }
    },
  },
};
`;
}
