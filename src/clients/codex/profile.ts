/**
 * Codex: it parses hook output that starts with '[' or '{' as JSON (and drops it when it is not the
 * JSON it expects), so every hook answers in JSON. One process serves all its threads; an idle thread
 * is woken by the sender, which queues it a turn (`codex queue`).
 */
import { jsonDialect } from '../dialect.js';
import { codexWrites } from '../writes.js';
import { claudeProfile } from '../claude/profile.js';
import type { ClientProfile } from '../profile.js';

export const codexProfile: ClientProfile = {
  id: 'codex',
  name: 'Codex',
  command: 'codex',
  configFiles: ['.codex/config.toml', '.codex/hooks.json'],
  // Codex's turn events are Claude Code's, by name and by order; it has no notification or session-end event.
  hookEvents: claudeProfile.hookEvents.filter(([, command]) => command !== 'hook-notification' && command !== 'hook-session-end'),
  preToolEvent: true,
  writtenFiles: codexWrites,
  dialect: jsonDialect,
  sessionVariable: null,
  // Its shell commands get the thread's id, which its hooks know as the session's.
  shell: { markers: ['CODEX_THREAD_ID'], sessionVariable: 'CODEX_THREAD_ID' },
  manySessionsPerProcess: true,
  wake: {
    kind: 'queue',
    executable: 'codex',
    executableVariable: 'AGENT_BUS_CODEX_BIN',
    queueArgs: (threadId, message) => ['queue', '--thread', threadId, '--message', message],
  },
  // Its config approves the server's tools as a whole (default_tools_approval_mode).
  approvedToolName: null,
  settings: null,
  // Every event it has reaches the server, SessionStart too.
  hookTools: { minVersion: [0, 171, 0], executable: { variable: 'AGENT_BUS_CODEX_BIN', fallback: 'codex' }, commandOnly: [] },
};
