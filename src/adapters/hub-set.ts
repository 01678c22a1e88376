/** Whether this machine is set to use a hub, told cheaply (the launcher asks it before any bundle loads). */
import { existsSync } from 'node:fs';
import { setting, type Env } from '../model/settings.js';
import { loginPath } from './hub-access.js';

export function hubSet(env: Env): boolean {
  return setting(env, 'AGENT_BUS_URL') !== '' || existsSync(loginPath(env));
}
