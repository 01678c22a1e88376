/**
 * The files a shell command writes, read from its syntax tree (tree-sitter's bash grammar, run as
 * WebAssembly): redirections (`>`, `>>`, `&>`, `>|`, `2>`, …), `tee`, `sed -i`, `perl -i`, `cp`,
 * `mv` and `install` onto a file or into a folder, `rm`, `truncate`, `git checkout` and `git restore`
 * of paths, and `apply_patch` on a patch; through `&&`, `||`, `;`, pipes, `( … )`, `{ …; }`,
 * `bash -c '…'`, and a `cd` earlier in the command. Paths are relative to the folder the command
 * starts in (or absolute). What the tree does not say for certain (a variable, `eval`, a script, an
 * interpreter writing files, a syntax error) names no file: the command is let through.
 *
 * This module is a bundle of its own (dist/bin/shell-writes.cjs), loaded only for a shell command.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { basename, dirname, isAbsolute, join, normalize, posix, resolve } from 'node:path';
import picomatch from 'picomatch';
import { patchFiles } from './writes.js';

/** The part of tree-sitter's node that is read here. */
export interface ShellNode {
  readonly type: string;
  readonly text: string;
  readonly isNamed: boolean;
  readonly hasError: boolean;
  readonly children: (ShellNode | null)[];
  readonly namedChildren: (ShellNode | null)[];
  childForFieldName(name: string): ShellNode | null;
  childrenForFieldName(name: string): (ShellNode | null)[];
}

export interface ShellOptions {
  /** The folder the command starts in, to tell a file from a branch and a folder from a file; null when unknown. */
  cwd: string | null;
  /** The home folder `~` stands for. */
  home?: string;
}

/** Where relative paths resolve: a path relative to the start folder, an absolute one, or unknown (`cd "$X"`). */
interface Scope {
  dir: string | null;
}

interface Walk {
  options: ShellOptions;
  parse: (text: string) => ShellNode | null;
  out: string[];
  depth: number;
}

/** Commands that run the rest of their words as a command. */
const WRAPPERS = new Set(['command', 'builtin', 'exec', 'nohup', 'time', 'nice', 'sudo', 'env', 'timeout', 'stdbuf']);
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh']);
/** Redirection operators that open their target for writing. */
const WRITE_REDIRECTS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&']);

// ---------------------------------------------------------------------------------------------
// Words

/** A word's value, when it is known without running anything; null for a variable, a substitution, … */
function literal(node: ShellNode | null): { text: string; glob: boolean } | null {
  if (node === null) return null;
  switch (node.type) {
    case 'command_name':
      return literal(node.namedChildren[0] ?? null);
    case 'word':
    case 'number':
      return unescapeWord(node.text);
    case 'raw_string':
      return { text: node.text.slice(1, -1), glob: false };
    case 'string': {
      let text = '';
      for (const part of node.namedChildren) {
        if (part === null || part.type !== 'string_content') return null;
        text += part.text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char));
      }
      return { text, glob: false };
    }
    case 'concatenation': {
      let text = '';
      let glob = false;
      for (const part of node.namedChildren) {
        const value = literal(part);
        if (value === null) return null;
        text += value.text;
        glob ||= value.glob;
      }
      return { text, glob };
    }
    default:
      return null;
  }
}

/** An unquoted word: backslashes quote the next character; an unquoted `*`, `?` or `[` is a glob. */
function unescapeWord(raw: string): { text: string; glob: boolean } {
  let text = '';
  let glob = false;
  for (let index = 0; index < raw.length; index += 1) {
    const char = raw[index] as string;
    if (char === '\\') {
      index += 1;
      if (index < raw.length && raw[index] !== '\n') text += raw[index];
      continue;
    }
    if (char === '*' || char === '?' || char === '[') glob = true;
    text += char;
  }
  return { text, glob };
}

/** The words of a command after its name, as values (null where unknown). */
function argumentsOf(command: ShellNode): ({ text: string; glob: boolean } | null)[] {
  return command.childrenForFieldName('argument').map((node) => literal(node));
}

// ---------------------------------------------------------------------------------------------
// Paths

function expandHome(text: string, options: ShellOptions): string | null {
  if (text === '~' || text.startsWith('~/')) return join(options.home ?? homedir(), text.slice(1));
  return text.startsWith('~') ? null : text;
}

/** A path as the command names it, resolved against the scope's folder: relative to the start folder, or absolute. */
function pathIn(scope: Scope, text: string, options: ShellOptions): string | null {
  const expanded = expandHome(text, options);
  if (expanded === null || expanded === '') return null;
  if (isAbsolute(expanded)) return normalize(expanded);
  if (scope.dir === null) return null;
  return scope.dir === '' ? normalize(expanded) : normalize(join(scope.dir, expanded));
}

/** Where a path is on disk, to ask whether it exists; null when the start folder is unknown. */
function onDisk(path: string, options: ShellOptions): string | null {
  if (isAbsolute(path)) return path;
  return options.cwd === null ? null : resolve(options.cwd, path);
}

function isFolder(path: string, options: ShellOptions): boolean {
  const real = onDisk(path, options);
  try {
    return real !== null && statSync(real).isDirectory();
  } catch {
    return false;
  }
}

function exists(path: string, options: ShellOptions): boolean {
  const real = onDisk(path, options);
  return real !== null && existsSync(real);
}

/** The files a word names: itself, or what its glob matches in one folder (a glob in its last part only). */
function pathsOf(scope: Scope, word: { text: string; glob: boolean } | null, options: ShellOptions): string[] {
  if (word === null) return [];
  const path = pathIn(scope, word.text, options);
  if (path === null) return [];
  if (!word.glob) return [path];
  const folder = dirname(path);
  if (picomatch.scan(folder).isGlob) return [];
  const real = onDisk(folder, options);
  if (real === null) return [];
  try {
    const match = picomatch(basename(path), { dot: false });
    return readdirSync(real).filter((name) => match(name)).map((name) => join(folder, name));
  } catch {
    return [];
  }
}

function add(walk: Walk, paths: (string | null)[]): void {
  for (const path of paths) if (path !== null && path !== '') walk.out.push(path);
}

// ---------------------------------------------------------------------------------------------
// Commands

type Word = { text: string; glob: boolean } | null;

/** Operands after the options: words not starting with `-` (all of them after `--`); `takesValue` options skip their value. */
function operands(words: Word[], takesValue: Set<string> = new Set()): Word[] {
  const found: Word[] = [];
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? null;
    const text = word?.text ?? '';
    if (ended || word === null || !text.startsWith('-') || text === '-') {
      found.push(word);
      continue;
    }
    if (text === '--') ended = true;
    else if (takesValue.has(text)) index += 1;
  }
  return found;
}

/** `cp`, `mv`, `install`: the destination of each source, DIR/basename for a folder (`-t DIR`, several sources, `dir/`). */
function copyTargets(name: string, words: Word[], scope: Scope, walk: Walk): void {
  const options = walk.options;
  const valued = name === 'install' ? new Set(['-m', '--mode', '-o', '--owner', '-g', '--group', '-S', '--suffix', '-t', '--target-directory']) : new Set(['-S', '--suffix', '-t', '--target-directory']);
  let target: Word | undefined;
  let ended = false;
  const rest: Word[] = [];
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? null;
    const text = word?.text ?? '';
    if (!ended && word !== null && text.startsWith('-') && text !== '-') {
      if (text === '--') ended = true;
      else if (text === '-t' || text === '--target-directory') target = words[++index] ?? null;
      else if (text.startsWith('--target-directory=')) target = { text: text.slice('--target-directory='.length), glob: false };
      else if (text.startsWith('-t') && text.length > 2) target = { text: text.slice(2), glob: false };
      else if (name === 'install' && (text === '-d' || text === '--directory')) return;
      else if (valued.has(text)) index += 1;
      continue;
    }
    rest.push(word);
  }
  let sources = rest;
  let folder: string | null = null;
  if (target !== undefined) {
    folder = target === null ? null : pathIn(scope, target.text, options);
    if (folder === null) return;
  } else {
    if (rest.length < 2) return;
    const destination = rest[rest.length - 1] ?? null;
    sources = rest.slice(0, -1);
    if (destination === null || destination.glob) return;
    const path = pathIn(scope, destination.text, options);
    if (path === null) return;
    if (sources.length > 1 || destination.text.endsWith('/') || isFolder(path, options)) folder = path;
    else add(walk, [path]);
  }
  const named = sources.flatMap((source) => pathsOf(scope, source, options));
  if (folder !== null) add(walk, named.map((source) => join(folder, basename(source))));
  // A move takes the file away from where it was: that is a write of it too.
  if (name === 'mv') add(walk, named);
}

/** `sed`: with `-i` (or `--in-place`), the files after the script. */
function sedTargets(words: Word[], scope: Scope, walk: Walk): void {
  let inPlace = false;
  let script = false;
  const files: Word[] = [];
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? null;
    const text = word?.text ?? '';
    if (!ended && word !== null && text.startsWith('-') && text !== '-') {
      if (text === '--') ended = true;
      else if (text.startsWith('--')) {
        if (text === '--in-place' || text.startsWith('--in-place=')) inPlace = true;
        if (text === '--expression' || text === '--file') {
          script = true;
          index += 1;
        } else if (text.startsWith('--expression=') || text.startsWith('--file=')) script = true;
      } else {
        // Short options, bundled: `-i` takes the rest as a suffix; `-e` and `-f` a value (the rest, or the next word); `-l` a number.
        for (let at = 1; at < text.length; at += 1) {
          const flag = text[at];
          if (flag === 'i') {
            inPlace = true;
            break;
          }
          if (flag === 'e' || flag === 'f' || flag === 'l') {
            if (flag !== 'l') script = true;
            if (at === text.length - 1) index += 1;
            break;
          }
        }
      }
      continue;
    }
    if (!script) script = true;
    else files.push(word);
  }
  if (inPlace) add(walk, files.flatMap((file) => pathsOf(scope, file, walk.options)));
}

/** `perl`: with `-i`, the files after the program. */
function perlTargets(words: Word[], scope: Scope, walk: Walk): void {
  let inPlace = false;
  let program = false;
  const files: Word[] = [];
  let ended = false;
  for (let index = 0; index < words.length; index += 1) {
    const word = words[index] ?? null;
    const text = word?.text ?? '';
    if (!ended && !program && word !== null && text.startsWith('-') && text !== '-') {
      if (text === '--') {
        ended = true;
        continue;
      }
      for (let at = 1; at < text.length; at += 1) {
        const flag = text[at];
        if (flag === 'i') {
          inPlace = true;
          break;
        }
        // Switches that take the rest of the word, or the next word, as their value.
        if (flag === 'e' || flag === 'E') {
          program = true;
          if (at === text.length - 1) index += 1;
          break;
        }
        if (flag === 'I' || flag === 'M' || flag === 'm' || flag === 'x' || flag === 'C' || flag === 'd' || flag === 'D' || flag === 'F' || flag === '0' || flag === 'l') break;
      }
      continue;
    }
    if (!program) program = true;
    else files.push(word);
  }
  if (inPlace) add(walk, files.flatMap((file) => pathsOf(scope, file, walk.options)));
}

/** `git checkout` and `git restore`: paths after `--`; before it, words that are files on disk (a branch is not). */
function gitTargets(words: Word[], scope: Scope, walk: Walk): void {
  const options = walk.options;
  let at = 0;
  let gitScope = scope;
  // Git's own options before the subcommand: -C DIR changes its folder.
  while (at < words.length) {
    const text = words[at]?.text ?? null;
    if (text === '-C') {
      const folder = words[at + 1]?.text;
      gitScope = { dir: folder === undefined ? null : pathIn(scope, folder, options) };
      at += 2;
    } else if (text === '-c' || text === '--git-dir' || text === '--work-tree' || text === '--namespace') at += 2;
    else if (text !== null && text.startsWith('-')) at += 1;
    else break;
  }
  const subcommand = words[at]?.text;
  if (subcommand !== 'checkout' && subcommand !== 'restore') return;
  const rest = words.slice(at + 1);
  const valued = subcommand === 'checkout' ? new Set(['-b', '-B', '--orphan', '--conflict', '--pathspec-from-file']) : new Set(['-s', '--source', '--conflict', '--pathspec-from-file']);
  let staged = false;
  let worktree = false;
  let afterDashes = false;
  const paths: Word[] = [];
  for (let index = 0; index < rest.length; index += 1) {
    const word = rest[index] ?? null;
    const text = word?.text ?? '';
    if (afterDashes) {
      paths.push(word);
      continue;
    }
    if (word !== null && text === '--') {
      afterDashes = true;
      continue;
    }
    if (word !== null && text.startsWith('-') && text !== '-') {
      if (text === '--staged' || text === '-S') staged = true;
      else if (text === '--worktree' || text === '-W') worktree = true;
      else if (valued.has(text)) index += 1;
      continue;
    }
    // Before `--`, restore takes only paths; checkout a branch or commit too, told from a path by whether it is one.
    if (subcommand === 'restore') paths.push(word);
    else if (word !== null && (word.glob || exists(pathIn(gitScope, word.text, options) ?? '', options))) paths.push(word);
  }
  // Restoring only the index writes no file.
  if (subcommand === 'restore' && staged && !worktree) return;
  add(walk, paths.flatMap((path) => pathsOf(gitScope, path, options)));
}

/** The patch an `apply_patch` runs on: its argument, its here-document or here-string, or what a literal printf/echo/cat pipes to it. */
function applyPatchTargets(patches: string[], scope: Scope, walk: Walk): void {
  for (const patch of patches) {
    for (const file of patchFiles(patch)) add(walk, [pathIn(scope, file, walk.options)]);
  }
}

/** A command name as it is run: `/usr/bin/rm` is `rm`. */
function commandName(command: ShellNode): string | null {
  const name = literal(command.childForFieldName('name'));
  return name === null ? null : posix.basename(name.text);
}

/** The words after a wrapper (`sudo`, `env X=1`, `timeout 5`, …): the command it runs, or null. */
function unwrap(name: string, words: Word[]): Word[] | null {
  let at = 0;
  const skipOptions = (valued: Set<string>): void => {
    while (at < words.length) {
      const text = words[at]?.text ?? null;
      if (text === null || !text.startsWith('-')) return;
      at += text === '--' ? 1 : valued.has(text) ? 2 : 1;
      if (text === '--') return;
    }
  };
  if (name === 'env') {
    skipOptions(new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']));
    while (at < words.length && (words[at]?.text ?? '').includes('=')) at += 1;
  } else if (name === 'sudo') skipOptions(new Set(['-u', '-g', '-h', '-p', '-C', '-D', '-r', '-t', '-U', '-T']));
  else if (name === 'nice') skipOptions(new Set(['-n', '--adjustment']));
  else if (name === 'timeout') {
    skipOptions(new Set(['-k', '--kill-after', '-s', '--signal']));
    at += 1;
  } else if (name === 'stdbuf') skipOptions(new Set(['-i', '-o', '-e']));
  else if (name === 'exec') skipOptions(new Set(['-a']));
  else skipOptions(new Set());
  return words.slice(at);
}

/** One simple command's writes, and its effect on the scope (`cd`). */
function simpleCommand(command: ShellNode, scope: Scope, walk: Walk, pipedIn: string | null, patchInput: string[]): void {
  const name = commandName(command);
  // Redirections written inside the command node (`cat <<< x > f`), and substitutions in its words.
  for (const child of command.namedChildren) {
    if (child === null) continue;
    if (child.type === 'file_redirect') redirect(child, scope, walk);
    else if (child.type !== 'command_name') substitutions(child, scope, walk);
  }
  if (name === null) return;
  let words = argumentsOf(command);
  let run = name;
  // Wrappers run the rest as a command.
  for (let guard = 0; WRAPPERS.has(run) && guard < 4; guard += 1) {
    const inner = unwrap(run, words);
    const first = inner?.[0];
    if (inner === null || first === undefined || first === null) return;
    run = posix.basename(first.text);
    words = inner.slice(1);
  }
  switch (run) {
    case 'cd':
    case 'pushd': {
      const target = operands(words)[0];
      if (words.length === 0 || target === undefined) scope.dir = expandHome('~', walk.options);
      else scope.dir = target === null || target.text === '-' ? null : pathIn(scope, target.text, walk.options);
      return;
    }
    case 'popd':
      scope.dir = null;
      return;
    case 'tee':
      add(walk, operands(words).flatMap((word) => pathsOf(scope, word, walk.options)));
      return;
    case 'rm':
    case 'truncate':
      add(walk, operands(words, run === 'truncate' ? new Set(['-s', '--size', '-r', '--reference']) : new Set()).flatMap((word) => pathsOf(scope, word, walk.options)));
      return;
    case 'cp':
    case 'mv':
    case 'install':
      copyTargets(run, words, scope, walk);
      return;
    case 'sed':
      sedTargets(words, scope, walk);
      return;
    case 'perl':
      perlTargets(words, scope, walk);
      return;
    case 'git':
      gitTargets(words, scope, walk);
      return;
    case 'apply_patch':
    case 'applypatch': {
      const given = words.flatMap((word) => (word === null ? [] : [word.text]));
      applyPatchTargets([...given, ...patchInput, ...(pipedIn === null ? [] : [pipedIn])], scope, walk);
      return;
    }
    default:
      if (SHELLS.has(run)) shellDashC(words, scope, walk);
  }
}

/** `bash -c 'script'`: the script is parsed in turn, in a scope of its own (its `cd` ends with it). */
function shellDashC(words: Word[], scope: Scope, walk: Walk): void {
  for (let index = 0; index < words.length; index += 1) {
    const text = words[index]?.text ?? null;
    if (text === null || !text.startsWith('-') || text === '--') return;
    // -c, or bundled with others (-lc, -ec).
    if (!text.startsWith('--') && text.includes('c')) {
      const script = words[index + 1];
      if (script === undefined || script === null || walk.depth > 8) return;
      const tree = walk.parse(script.text);
      if (tree === null) return;
      statements(tree, { dir: scope.dir }, { ...walk, depth: walk.depth + 1 });
      return;
    }
  }
}

/** A redirection that writes its target: `>`, `>>`, `&>`, `>|`, `2>`, `<>`, `>&file`. */
function redirect(node: ShellNode, scope: Scope, walk: Walk): void {
  const operator = node.children.find((child) => child !== null && !child.isNamed && child.type !== '(' && child.type !== ')')?.type;
  if (operator === undefined || !WRITE_REDIRECTS.has(operator)) return;
  // Only the first destination is the target: the grammar takes the words after it too.
  const target = node.childrenForFieldName('destination')[0] ?? null;
  if (target === null) return;
  const word = literal(target);
  // `>&2`, `2>&1`, `>&-`: a descriptor, not a file.
  if (operator === '>&' && (word === null || target.type === 'number' || word.text === '-' || isDescriptor(word.text))) return;
  add(walk, pathsOf(scope, word, walk.options));
}

/** `1`, `2-`: a file descriptor, moved or copied. */
function isDescriptor(text: string): boolean {
  const digits = text.endsWith('-') ? text.slice(0, -1) : text;
  return digits !== '' && [...digits].every((char) => char >= '0' && char <= '9');
}

/** `$( … )` and `<( … )` run in a subshell: their writes count, their `cd` does not. */
function substitutions(node: ShellNode, scope: Scope, walk: Walk): void {
  if (node.type === 'command_substitution' || node.type === 'process_substitution') {
    statements(node, { dir: scope.dir }, walk);
    return;
  }
  for (const child of node.namedChildren) if (child !== null) substitutions(child, scope, walk);
}

/** The literal text a pipeline stage writes to the next: `printf '%s' '…'`, `echo '…'`, `cat <<'EOF' … EOF`. */
function producedText(stage: ShellNode): string | null {
  let command = stage;
  let heredoc: string | null = null;
  if (stage.type === 'redirected_statement') {
    const body = stage.childForFieldName('body');
    if (body === null) return null;
    command = body;
    for (const redirection of stage.childrenForFieldName('redirect')) heredoc ??= redirection === null ? null : hereText(redirection);
  }
  if (command.type !== 'command') return null;
  const name = commandName(command);
  const words = argumentsOf(command).map((word) => word?.text ?? null);
  if (name === 'cat') return heredoc;
  if (name === 'echo') return words.filter((word) => word !== null && !word.startsWith('-')).join(' ');
  if (name === 'printf') return words.slice(words[0] === '%s' || words[0] === '%s\\n' ? 1 : 0).join('');
  return null;
}

/** The text a here-document or here-string gives a command's input. */
function hereText(node: ShellNode): string | null {
  if (node.type === 'heredoc_redirect') {
    const body = node.namedChildren.find((child) => child?.type === 'heredoc_body');
    return body?.text ?? null;
  }
  if (node.type === 'herestring_redirect') return literal(node.namedChildren[0] ?? null)?.text ?? null;
  return null;
}

/** A statement: its writes, in order, and what it does to the scope. */
function statement(node: ShellNode, scope: Scope, walk: Walk, pipedIn: string | null = null, hereInput: string[] = []): void {
  switch (node.type) {
    case 'command':
      simpleCommand(node, scope, walk, pipedIn, hereInput);
      return;
    case 'redirected_statement': {
      const body = node.childForFieldName('body');
      const redirects = node.childrenForFieldName('redirect').filter((child): child is ShellNode => child !== null);
      const input = redirects.map(hereText).filter((text): text is string => text !== null);
      // A redirection of a group or subshell is opened before it runs, in the folder it starts in; one
      // the grammar hangs on a list (`cd sub && echo > f`) belongs to the list's last command, after the cd.
      const before = { dir: scope.dir };
      if (body !== null) statement(body, scope, walk, pipedIn, input);
      const redirectScope = body?.type === 'list' || body?.type === 'command' ? scope : before;
      for (const redirection of redirects) {
        if (redirection.type === 'file_redirect') redirect(redirection, redirectScope, walk);
        // The grammar puts what follows a here-document's start on its line inside it (`cat <<EOF | apply_patch`).
        else if (redirection.type === 'heredoc_redirect') {
          for (const inner of redirection.namedChildren) {
            if (inner !== null && inner.type !== 'heredoc_start' && inner.type !== 'heredoc_body' && inner.type !== 'heredoc_end') {
              followingHeredoc(inner, scope, walk, hereText(redirection));
            }
          }
        }
      }
      return;
    }
    case 'pipeline': {
      let previous: string | null = pipedIn;
      for (const stage of node.namedChildren) {
        if (stage === null) continue;
        // Each stage of a pipeline runs in a subshell of its own.
        statement(stage, { dir: scope.dir }, walk, previous);
        previous = producedText(stage);
      }
      return;
    }
    case 'subshell':
    case 'command_substitution':
    case 'process_substitution':
      statements(node, { dir: scope.dir }, walk);
      return;
    case 'list': {
      // A here-document the grammar hangs on a list (`cd src && apply_patch <<EOF`) is its last command's input.
      const parts = node.namedChildren.filter((child): child is ShellNode => child !== null && child.type !== 'comment');
      parts.forEach((part, index) => statement(part, scope, walk, null, index === parts.length - 1 ? hereInput : []));
      return;
    }
    case 'compound_statement':
    case 'program':
      statements(node, scope, walk);
      return;
    case 'function_definition':
      return;
    default:
      // if, while, for, case, negation, test, declarations: every statement and substitution inside.
      for (const child of node.namedChildren) {
        if (child === null) continue;
        if (child.type === 'file_redirect') redirect(child, scope, walk);
        else statement(child, scope, walk);
      }
  }
}

/** What the grammar puts after a here-document's start on its line: `| next` (a pipeline fed by it), `&& next`, `; next`. */
function followingHeredoc(node: ShellNode, scope: Scope, walk: Walk, text: string | null): void {
  if (node.type === 'pipeline') {
    let previous = text;
    for (const stage of node.namedChildren) {
      if (stage === null) continue;
      statement(stage, { dir: scope.dir }, walk, previous);
      previous = producedText(stage);
    }
    return;
  }
  statement(node, scope, walk);
}

function statements(node: ShellNode, scope: Scope, walk: Walk): void {
  for (const child of node.namedChildren) {
    if (child === null || child.type === 'comment') continue;
    statement(child, scope, walk);
  }
}

/** The files a parsed command writes; none when the tree has a syntax error. */
export function writesOfTree(tree: ShellNode, options: ShellOptions, parse: (text: string) => ShellNode | null): string[] {
  if (tree.hasError) return [];
  const walk: Walk = { options, parse, out: [], depth: 0 };
  statements(tree, { dir: '' }, walk);
  return [...new Set(walk.out)];
}

// ---------------------------------------------------------------------------------------------
// The parser

interface TreeSitter {
  Parser: { init(options?: { locateFile?: (file: string, folder: string) => string }): Promise<void>; new (): TreeParser };
  Language: { load(input: Uint8Array | string): Promise<unknown> };
}
interface TreeParser {
  setLanguage(language: unknown): void;
  parse(text: string): { rootNode: ShellNode } | null;
}

let parser: Promise<TreeParser> | null = null;

/** tree-sitter and its bash grammar, made once per process. */
function bashParser(): Promise<TreeParser> {
  parser ??= (async () => {
    // WebAssembly is compiled by its baseline compiler only: V8 would otherwise optimise the grammar's
    // code on other threads, and a hook's process waits for that at its exit, some 400 ms of processor
    // time for a parse that takes milliseconds.
    setFlagsFromString('--liftoff-only');
    const require = createRequire(import.meta.filename);
    const main = require.resolve('@vscode/tree-sitter-wasm');
    const wasm = dirname(main);
    const treeSitter = require('@vscode/tree-sitter-wasm') as TreeSitter;
    await treeSitter.Parser.init({ locateFile: (file) => join(wasm, file) });
    const language = await treeSitter.Language.load(join(wasm, 'tree-sitter-bash.wasm'));
    const made = new treeSitter.Parser();
    made.setLanguage(language);
    return made;
  })();
  return parser;
}

/**
 * The files a shell command writes, relative to the folder it starts in (or absolute); [] for one it
 * writes none to, or that cannot be read for certain.
 */
export async function shellWrites(command: string, options: ShellOptions): Promise<string[]> {
  try {
    const made = await bashParser();
    const parse = (text: string): ShellNode | null => made.parse(text)?.rootNode ?? null;
    const tree = parse(command);
    return tree === null ? [] : writesOfTree(tree, options, parse);
  } catch {
    return [];
  }
}
