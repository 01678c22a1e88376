/**
 * A client's version, as its own `--version` says it: what init decides by (which hooks a client
 * runs, whether it can be woken) and what doctor checks the wired files against. Asked once per
 * executable and process, bounded by AGENT_BUS_CLIENT_VERSION_TIMEOUT.
 */
import { createRequire } from 'node:module';
import { setting } from '../model/settings.js';

export interface VersionAnswer {
  /** `major.minor.patch`, or null when it cannot be told. */
  version: string | null;
  /** Why it cannot be told. */
  problem: string | null;
}

const answers = new Map<string, VersionAnswer>();

/** `bin --version`, for the client called `name` in what is said. */
export function clientVersion(bin: string, name: string, env: NodeJS.ProcessEnv): VersionAnswer {
  const known = answers.get(bin);
  if (known) return known;
  const seconds = setting(env, 'AGENT_BUS_CLIENT_VERSION_TIMEOUT');
  const { spawnSync } = createRequire(import.meta.filename)('node:child_process') as typeof import('node:child_process');
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: seconds * 1000, env });
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(result.stdout ?? '')?.[0] ?? null;
  const why = result.error ? ((result.error as NodeJS.ErrnoException).code ?? result.error.message) : `exit ${result.status}`;
  const answer = version !== null ? { version, problem: null } : { version: null, problem: `cannot tell the ${name} version ('${bin} --version': ${why})` };
  answers.set(bin, answer);
  return answer;
}

/** Whether `version` is `minimum` or later. */
export function atLeast(version: string, minimum: readonly number[]): boolean {
  const parts = version.split('.').map(Number);
  for (let index = 0; index < minimum.length; index++) {
    const have = parts[index] ?? 0;
    const want = minimum[index] ?? 0;
    if (have !== want) return have > want;
  }
  return true;
}
