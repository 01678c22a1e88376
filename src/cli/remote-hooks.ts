/** The hooks that have a bundle of their own for a machine set to use a hub, and the kind each is (data only: the launcher reads it). */
import { HOOK_COMMAND_KINDS } from '../model/hooks.js';
import type { HookKind } from '../model/hooks.js';

export const REMOTE_HOOK_KINDS: Readonly<Record<string, HookKind>> = HOOK_COMMAND_KINDS;
