/**
 * The Node.js a client installed from npm runs on, where it needs a newer one than agent-bus does
 * (Qwen Code: 22 or later): its executable's `#!` line names the interpreter, `env node` being the
 * first `node` on PATH. What doctor checks a wired client against.
 */
import { readFileSync } from 'node:fs';
import { atLeast, clientVersion } from './client-version.js';

/** The interpreter a script's `#!` line starts it with: a path, or a name looked up on PATH (`env node`); null for a binary or another interpreter. */
export function nodeOfScript(script: string): string | null {
  let head: string;
  try {
    head = readFileSync(script, 'utf8').slice(0, 200).split('\n')[0] ?? '';
  } catch {
    return null;
  }
  const match = /^#!\s*(\S+)(?:\s+(?:-S\s+)?(\S+))?/.exec(head);
  if (!match) return null;
  const [, interpreter = '', argument] = match;
  if (/(^|\/)env$/.test(interpreter)) return argument !== undefined && /(^|\/)node$/.test(argument) ? argument : null;
  return /(^|\/)node$/.test(interpreter) ? interpreter : null;
}

export interface NodeCheck {
  /** The Node.js the client runs on, as `node --version` says it, or null when it cannot be told. */
  version: string | null;
  /** Whether that is older than the client needs. */
  tooOld: boolean;
}

/** The Node.js `script` runs on (`node`, when its `#!` says `env node`, as found through `env`'s PATH), checked against `minimum`. */
export function clientNode(script: string, minimum: readonly number[], env: NodeJS.ProcessEnv): NodeCheck | null {
  const node = nodeOfScript(script);
  if (node === null) return null;
  const { version } = clientVersion(node, 'Node.js', env);
  return { version, tooOld: version !== null && !atLeast(version, minimum) };
}
