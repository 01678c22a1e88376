/**
 * The Node.js Qwen Code runs on in the client suite: it needs 22 or later, and the suite may run on
 * 20. The binary is the one scripts/test-on-node.ts fetches from the npm registry (the same version CI
 * prepares its copy for, so CI fetches it once); that fetch is safe beside another of the same version.
 */
import { join } from 'node:path';
import { nodeFolder } from '../../scripts/test-on-node.js';
import { ROOT } from '../helpers/bus-env.js';

/** The Node.js version Qwen Code runs on here: .ci/run's OTHER_NODES has it too. */
export const QWEN_NODE_VERSION = '22.23.5';

/** Qwen Code's own entry point, run with that Node.js (its `.bin/qwen` would take the first node on PATH). */
export const QWEN_ENTRY = join(ROOT, 'clients', 'node_modules', '@qwen-code', 'qwen-code', 'cli-entry.js');

let found: string | null | undefined;

/** The node binary to run Qwen Code with: this one where it is 22 or later, else the fetched 22; null when that cannot be had. */
export function qwenNode(): string | null {
  if (found !== undefined) return found;
  if (Number(process.versions.node.split('.')[0]) >= 22) return (found = process.execPath);
  try {
    found = join(nodeFolder(QWEN_NODE_VERSION), 'bin', 'node');
  } catch {
    found = null;
  }
  return found;
}
