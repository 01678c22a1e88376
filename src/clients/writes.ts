/**
 * Which files a tool call is about to write, read from a pre-tool hook's payload in the client's own
 * terms: absolute paths, or paths relative to the session's folder. Data and small parsers only, so
 * the hooks' bundles stay small; a shell command's files are read by shell-writes.ts, loaded only for
 * one. A call this cannot read names no file (and is let through).
 */
import { isAbsolute, join } from 'node:path';
import { shellCommandWrites } from './shell-load.js';

type Payload = Record<string, unknown>;

/** The files a tool call writes, by the client's payload (a shell command's once its parser is loaded). */
export type WrittenFiles = (payload: Payload) => string[] | Promise<string[]>;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function input(payload: Payload): Payload {
  const value = payload.tool_input ?? payload.args;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Payload) : {};
}

/** The files an `apply_patch` body adds, updates, deletes or moves to (`*** Update File: path`). */
export function patchFiles(patch: string): string[] {
  const files: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const match = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/.exec(line);
    if (match?.[1] && match[1].trim() !== '') files.push(match[1].trim());
  }
  return [...new Set(files)];
}

/**
 * The files a shell tool's command (`tool_input.command`) writes, relative to the session's folder
 * (`workdir`, or Gemini CLI's `dir_path`, is where it runs, if given).
 */
async function shellToolWrites(payload: Payload): Promise<string[]> {
  const given = input(payload);
  const command = text(given.command);
  if (command === null) return [];
  const folder = text(payload.cwd);
  const workdir = text(given.workdir) ?? text(given.dir_path);
  const runsIn = workdir === null ? folder : isAbsolute(workdir) || folder === null ? workdir : join(folder, workdir);
  const files = await shellCommandWrites(command, runsIn ?? process.cwd());
  return workdir === null ? files : files.map((file) => (isAbsolute(file) ? file : join(workdir, file)));
}

/** Claude Code: Edit, Write and MultiEdit name `file_path`; NotebookEdit `notebook_path`; Bash runs `command`. */
export const claudeWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'Bash') return shellToolWrites(payload);
  if (tool === null || !['Edit', 'Write', 'MultiEdit', 'NotebookEdit'].includes(tool)) return [];
  const given = input(payload);
  const file = text(tool === 'NotebookEdit' ? given.notebook_path : given.file_path);
  return file === null ? [] : [file];
};

/**
 * Codex: `apply_patch` (its hooks may name it Edit or Write), the patch in `command`, paths relative to
 * `cwd`; and its shell tool (`Bash` to hooks), whose command is read as Claude Code's is, including
 * `apply_patch <<'EOF' … EOF`, which Codex applies as a patch: how a model without the apply_patch
 * tool edits files.
 */
export const codexWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'Bash') return shellToolWrites(payload);
  if (tool === null || !['apply_patch', 'Edit', 'Write'].includes(tool)) return [];
  const given = input(payload);
  const patch = text(given.command) ?? text(given.patch) ?? text(given.input);
  if (patch !== null) return patchFiles(patch);
  const file = text(given.file_path) ?? text(given.path);
  return file === null ? [] : [file];
};

/**
 * opencode, as its plugin hands the call on (`tool_name` the tool's id, `tool_input` its args): `edit`
 * and `write` name `filePath` (opencode 2: `path`), absolute or relative to the session's folder; `apply_patch` (`patch` in
 * older releases) carries the patch in `patchText`; `bash` runs `command`.
 */
export const opencodeWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'bash') return shellToolWrites(payload);
  const given = input(payload);
  if (tool === 'edit' || tool === 'write' || tool === 'multiedit') {
    // opencode 1.x names the file `filePath`, opencode 2 `path`.
    const file = text(given.filePath) ?? text(given.path);
    return file === null ? [] : [file];
  }
  if (tool === 'apply_patch' || tool === 'patch') {
    const patch = text(given.patchText);
    return patch === null ? [] : patchFiles(patch);
  }
  return [];
};

/**
 * Gemini CLI: `write_file` and `replace` name `file_path`, absolute or relative to the session's folder;
 * `run_shell_command` runs `command`, in `dir_path` if given.
 */
export const geminiWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'run_shell_command') return shellToolWrites(payload);
  if (tool !== 'write_file' && tool !== 'replace') return [];
  const file = text(input(payload).file_path);
  return file === null ? [] : [file];
};

/**
 * Copilot CLI, as its hooks name its tools in Claude Code's terms: `Write` (its `create`) and `Edit`
 * name the file in `path`, absolute or relative to the session's folder; its shell tool runs `command`.
 */
export const copilotWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'Bash' || tool === 'bash') return shellToolWrites(payload);
  if (tool === null || !['Write', 'Edit', 'create', 'edit'].includes(tool)) return [];
  const given = input(payload);
  const file = text(given.path) ?? text(given.file_path);
  return file === null ? [] : [file];
};

/** Pi: `write` and `edit` name `path`, absolute or relative to the session's folder (a leading `@` is dropped, as Pi does); `bash` runs `command`. */
export const piWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  if (tool === 'bash') return shellToolWrites(payload);
  if (tool !== 'write' && tool !== 'edit') return [];
  const file = text(input(payload).path);
  return file === null ? [] : [file.replace(/^@/, '')];
};

/**
 * Cline CLI, as its plugin hands the pre-tool hook a call: `editor` creates, replaces in or inserts
 * into the file at `path` (absolute); its shell tool `run_commands` runs `commands`, each read as
 * Claude Code's Bash command is.
 */
export const clineWrites: WrittenFiles = async (payload) => {
  const tool = text(payload.tool_name);
  const given = input(payload);
  if (tool === 'run_commands' && Array.isArray(given.commands)) {
    const commands = given.commands.filter((command): command is string => typeof command === 'string');
    const each = await Promise.all(commands.map((command) => shellToolWrites({ ...payload, tool_input: { command } })));
    return [...new Set(each.flat())];
  }
  if (tool === null || !['editor', 'write_to_file', 'replace_in_file'].includes(tool)) return [];
  const file = text(given.path);
  return file === null ? [] : [file];
};

/**
 * Qwen Code, whose hooks name its own tools: `write_file` and `edit` name `file_path`, `notebook_edit`
 * `notebook_path`, absolute or relative to the session's folder; `run_shell_command` runs `command`
 * (in `directory`, where given), read as Claude Code's Bash is.
 */
export const qwenWrites: WrittenFiles = (payload) => {
  const tool = text(payload.tool_name);
  const given = input(payload);
  if (tool === 'run_shell_command') {
    const directory = text(given.directory);
    return shellToolWrites(directory === null ? payload : { ...payload, tool_input: { ...given, workdir: directory } });
  }
  if (tool === 'write_file' || tool === 'edit') {
    const file = text(given.file_path);
    return file === null ? [] : [file];
  }
  if (tool === 'notebook_edit') {
    const file = text(given.notebook_path) ?? text(given.file_path);
    return file === null ? [] : [file];
  }
  return [];
};
