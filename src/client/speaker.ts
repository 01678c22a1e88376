/** Who a command speaks as on this machine's bus: --name, else $AGENT_BUS_NAME, else the human. */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { HUMAN, parseSpeaker } from '../core/names.js';
import { speakerRegistrations as registrationsOfSpeaker } from '../core/roster.js';
import { canonicalPath } from '../adapters/identity.js';
import type { Registration } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';

export const DEFAULT_HUMAN = HUMAN;

/** The name the CLI acts as: --name, else $AGENT_BUS_NAME, else human. */
export function speakerName(flag: string | boolean | undefined, env: Env): string {
  const name = typeof flag === 'string' ? flag.trim() : setting(env, 'AGENT_BUS_NAME') || DEFAULT_HUMAN;
  parseSpeaker(name);
  return name;
}

/** The name --name asks to speak as, checked; null when the command line names none. */
export function askedName(flag: string | boolean | undefined, env: Env): string | null {
  return typeof flag === 'string' ? speakerName(flag, env) : null;
}

/** How a speaker is put on the roster when it sends or connects (the rule is core's `speakerRegistrations`). */
export function speakerRegistrations(name: string, env: Env, cwd: string): Registration[] {
  const repo = setting(env, 'AGENT_BUS_REPO');
  return registrationsOfSpeaker(name, {
    own: (setting(env, 'AGENT_BUS_NAME') || DEFAULT_HUMAN) === name,
    declaredRepo: repo === '' ? null : canonicalPath(resolve(cwd, repo)),
    cwd,
    home: env.HOME && env.HOME !== '' ? env.HOME : homedir(),
  });
}
