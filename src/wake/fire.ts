/**
 * Running a wake command: `/bin/sh -c` in a session of its own, detached, never
 * awaited. The message reaches it only through its environment and, whole, as
 * JSON on stdin: a body never becomes part of a command line. A command that
 * does not read its stdin never stalls the sender.
 */
import { createRequire } from 'node:module';
import { bodyPreview } from '../audit/record.js';
import type { WAKE_COMMAND_VARIABLES } from '../model/settings.js';

export interface WakeMessage {
  from: string;
  to: string;
  threadId: string | null;
  messageId: string | null;
  body: string;
}

/** `fired:OK` when the command was started, `fired:ERR:<what>` when it could not be. */
export function fireWake(command: string, message: WakeMessage, env: NodeJS.ProcessEnv): string {
  try {
    const { spawn } = createRequire(import.meta.filename)('node:child_process') as typeof import('node:child_process');
    // Each of them, and only they: doctor and the settings test know these names by that list.
    const given: Record<(typeof WAKE_COMMAND_VARIABLES)[number], string> = {
      AGENT_BUS_FROM: message.from,
      AGENT_BUS_TO: message.to,
      AGENT_BUS_THREAD_ID: message.threadId ?? '',
      AGENT_BUS_MESSAGE_ID: message.messageId ?? '',
      AGENT_BUS_BODY_PREVIEW: bodyPreview(message.body),
    };
    const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: { ...env, ...given } });
    let failed: string | null = null;
    child.on('error', (error) => {
      failed = error.name;
    });
    if (child.pid === undefined) return `fired:ERR:${failed ?? 'SpawnError'}`;
    const stdin = child.stdin;
    if (stdin) {
      stdin.on('error', () => undefined);
      stdin.end(JSON.stringify({ from: message.from, to: message.to, thread_id: message.threadId, message_id: message.messageId, body: message.body }));
      // What the command never reads must not keep the sender alive.
      (stdin as unknown as { unref?: () => void }).unref?.();
    }
    child.unref();
    return 'fired:OK';
  } catch (error) {
    return `fired:ERR:${(error as Error).name || 'Error'}`;
  }
}
