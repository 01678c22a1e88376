/**
 * This machine's PATH with no `agent-bus` on it: a test decides whether agent-bus is on PATH, never
 * what happens to be installed. A folder of PATH that holds one is stood in for by a folder of links
 * to everything else in it (made once per test process, removed when it exits).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

let cleaned: string | undefined;

export function pathWithoutAgentBus(base: string = process.env.PATH ?? ''): string {
  if (base === process.env.PATH && cleaned !== undefined) return cleaned;
  let shadows: string | null = null;
  const folders = base.split(delimiter).map((folder, index) => {
    if (folder === '' || !existsSync(join(folder, 'agent-bus'))) return folder;
    shadows ??= mkdtempSync(join(tmpdir(), 'agent-bus-test-path-'));
    const shadow = join(shadows, String(index));
    mkdirSync(shadow);
    for (const name of readdirSync(folder)) if (name !== 'agent-bus') symlinkSync(join(folder, name), join(shadow, name));
    return shadow;
  });
  if (shadows !== null) {
    const made = shadows;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  const path = folders.join(delimiter);
  if (base === process.env.PATH) cleaned = path;
  return path;
}
