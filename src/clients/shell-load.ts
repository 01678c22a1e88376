/**
 * The door to shell-writes.ts from a hook: a command whose text names no redirection and none of the
 * commands that module reads writes nothing it could find, and is answered without loading it (a
 * parser in WebAssembly: tens of milliseconds). Otherwise it is loaded, from a bundle of its own
 * beside the command bundles (dist/bin/shell-writes.cjs), or as a module where nothing is bundled.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { requireBundle } from '../adapters/bundles.js';

type ShellModule = typeof import('./shell-writes.js');

export const SHELL_BUNDLE = 'shell-writes.cjs';

/** The commands shell-writes.ts reads the written files of, by name. */
export const WRITING_COMMANDS = ['tee', 'sed', 'perl', 'cp', 'mv', 'install', 'rm', 'truncate', 'git', 'apply_patch', 'applypatch'] as const;

/** Redirections that write no file of a repo, so common (`npm test 2>&1 | tail`) that a `>` in them alone should not load the parser. */
const HARMLESS_REDIRECTS = ['2>&1', '1>&2', '>&2', '>/dev/null', '> /dev/null'];
const WORD_ENDS = new Set([' ', '\t', '\n', ';', '|', '&', ')', '"', "'"]);

/** The text with each harmless redirection taken out where it ends a word (`>&2x` would write a file named 2x: kept). */
function withoutHarmless(command: string): string {
  let text = command;
  for (const redirect of HARMLESS_REDIRECTS) {
    let at = text.indexOf(redirect);
    while (at >= 0) {
      const next = text[at + redirect.length];
      if (next === undefined || WORD_ENDS.has(next)) text = text.slice(0, at) + text.slice(at + redirect.length);
      else at += 1;
      at = text.indexOf(redirect, at);
    }
  }
  return text;
}

/** Whether a command may write a file shell-writes.ts can name: a `>` or one of its commands is in the text (`bash -c '…'` included). */
export function mayWrite(command: string): boolean {
  return WRITING_COMMANDS.some((name) => command.includes(name)) || withoutHarmless(command).includes('>');
}

let loading: Promise<ShellModule> | null = null;

function load(): Promise<ShellModule> {
  loading ??= (async () => {
    const here = import.meta.filename;
    // A command bundle lives in dist/bin/commands; the shell bundle beside that folder.
    const bundled = join(dirname(here), '..', SHELL_BUNDLE);
    if (existsSync(bundled)) return requireBundle(bundled) as ShellModule;
    // Not bundled: a name the bundler cannot follow, so no hook's bundle takes the parser in.
    const module = ['./shell-writes', existsSync(join(dirname(here), 'shell-writes.ts')) ? '.ts' : '.js'].join('');
    return (await import(module)) as ShellModule;
  })();
  return loading;
}

/** The files a shell command writes, relative to `cwd` (the folder it runs in) or absolute. */
export async function shellCommandWrites(command: string, cwd: string | null): Promise<string[]> {
  if (!mayWrite(command)) return [];
  try {
    return await (await load()).shellWrites(command, { cwd });
  } catch {
    return [];
  }
}
