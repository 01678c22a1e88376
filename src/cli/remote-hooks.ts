/** The hooks that have a bundle of their own for a machine set to use a hub, and the kind each is (data only: the launcher reads it). */
import type { HookKind } from '../hooks/run-kind.js';

export const REMOTE_HOOK_KINDS: Readonly<Record<string, HookKind>> = {
  'hook-user-prompt': 'prompt',
  'hook-stop': 'stop',
  'hook-session-start': 'session-start',
  'hook-pre-tool': 'pre-tool',
  'hook-notification': 'notification',
  'hook-session-end': 'session-end',
};
