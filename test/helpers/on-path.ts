/** `agent-bus` on PATH, as an installed one would be: a folder holding a link to the built CLI, for what init writes to run. */
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { CLI } from './bus-env.js';
import { pathWithoutAgentBus } from './clean-path.js';

/** A folder under `dir` with `agent-bus` in it (a link to `target`, the built CLI unless said), and PATH with it first. */
export function agentBusOnPath(dir: string, base: string | undefined = pathWithoutAgentBus(), target = CLI): { bin: string; folder: string; PATH: string } {
  const folder = join(dir, 'path-bin');
  mkdirSync(folder, { recursive: true });
  const bin = join(folder, 'agent-bus');
  if (!existsSync(bin)) symlinkSync(target, bin);
  return { bin, folder, PATH: `${folder}${delimiter}${base ?? ''}` };
}
