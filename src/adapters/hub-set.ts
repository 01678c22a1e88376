/** Whether this machine is set to use a hub, told cheaply (the launcher asks it before any bundle loads). */
import { existsSync } from 'node:fs';
import type { Env } from '../core/settings.js';
import { loginPath } from './hub-access.js';

export function hubSet(env: Env): boolean {
  return (env.AGENT_BUS_URL ?? '').trim() !== '' || existsSync(loginPath(env));
}
