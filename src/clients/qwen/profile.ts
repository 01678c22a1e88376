/**
 * Qwen Code: hooks in the repo's `.qwen/settings.json`, in Claude Code's shape and event names, with
 * Claude Code's payloads, answered in JSON (`hookSpecificOutput.additionalContext`, PreToolUse's
 * `permissionDecision`, Stop's `decision: block`). It drops PreToolUse's context (0.24.4 reads only its
 * decision) and appends PostToolUse's to the tool's result: so the pre-tool hook runs twice a call,
 * refusing a reserved file's write at PreToolUse and showing notices and urgent mail at PostToolUse,
 * and nothing is marked shown that its model would not see. Its UserPromptSubmit fires again on each send of
 * tool results and continuations, the prompt empty: the prompt hook answers those with nothing, so
 * mail keeps to the prompt, the stop and (urgent) the next tool call, as elsewhere. Qwen Code caps the
 * Stop blocks in a row itself (8) and says so in `stop_hook_active`. Its MCP servers, hooks and shell
 * commands get QWEN_CODE_SESSION_ID. It runs command hooks only (no `mcp_tool`).
 */
import { additionalContext, jsonDialect, type HookDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { qwenWrites } from '../writes.js';

// Every answer is JSON; the context between tool calls is PostToolUse's.
const dialect: HookDialect = { ...jsonDialect, preTool: additionalContext('PostToolUse') };

export const qwenProfile: ClientProfile = {
  id: 'qwen',
  name: 'Qwen Code',
  command: 'qwen',
  configFiles: ['.qwen/settings.json'],
  hookEvents: [
    ['SessionStart', 'hook-session-start'],
    ['UserPromptSubmit', 'hook-user-prompt'],
    ['PreToolUse', 'hook-pre-tool'],
    ['PostToolUse', 'hook-pre-tool'],
    ['Stop', 'hook-stop'],
    // Presence: waiting on a person (a permission prompt), never its other notices (a sign-in, an idle prompt).
    ['Notification', 'hook-notification', 'permission_prompt|elicitation_dialog'],
    ['SessionEnd', 'hook-session-end'],
  ],
  preToolEvent: true,
  preToolSplit: { guard: 'PreToolUse', context: 'PostToolUse' },
  // A person's prompt, an ACP prompt and a wake's nudge all have words; its own sends have none.
  promptResent: (payload) => typeof payload.prompt !== 'string' || payload.prompt.trim() === '',
  writtenFiles: qwenWrites,
  dialect,
  sessionVariable: 'QWEN_CODE_SESSION_ID',
  // Its shell tool's commands get QWEN_CODE=1 and the session's id.
  shell: { markers: ['QWEN_CODE'], sessionVariable: 'QWEN_CODE_SESSION_ID' },
  manySessionsPerProcess: false,
  // An interactive session gives the processes it starts its inbox socket, and the token that makes a
  // post its own (taken without review): its MCP server posts a nudge there for an idle session. The
  // turn a post starts runs no UserPromptSubmit: the nudge asks for read_inbox, and the stop hook holds
  // the turn for what waits. It has no hook that can start a turn, so no watcher stands behind the socket.
  wake: { kind: 'watch', startedBy: 'hook', interactive: null, socket: { path: 'QWEN_CODE_MESSAGING_SOCKET', token: 'QWEN_CODE_MESSAGING_TOKEN', frame: 'qwen' } },
  // Its config trusts the server whole (`trust`): no per-tool approval names.
  approvedToolName: null,
  // Its package declares Node.js 22 or later (engines), which agent-bus, on 20.19 too, does not.
  needsNode: [22],
  settings: null,
};
