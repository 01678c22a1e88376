/** Which hook runs, and for which client: what a hook on this machine and one over a hub both need. */
import { parseNameLenient } from '../core/names.js';
import { setting, type Env } from '../model/settings.js';

import type { HookKind } from '../model/hooks.js';

export type { HookKind };

/** The client a hook answers for: --client, else AGENT_BUS_CLIENT, else the client part of AGENT_BUS_NAME. */
export function clientOf(run: { client: string | undefined; env: Env }): string | null {
  const named = parseNameLenient(setting(run.env, 'AGENT_BUS_NAME'))?.client ?? null;
  return run.client ?? (setting(run.env, 'AGENT_BUS_CLIENT') || named);
}
