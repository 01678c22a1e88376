/**
 * How each client is started by the bus: its executable (a setting may name another), and the
 * command line of its own headless mode for a prompt, in its safe mode that lets it edit inside its
 * folder and call the bus's tools without a permission prompt nobody would answer (or, with --yolo,
 * its own bypass); and the command line of its interactive mode with that first prompt, in the same
 * mode, for a person to watch or take over in tmux. The words are the client's flags and the prompt
 * as one argument: nothing here ever goes through a shell.
 */
import type { SpawnableClient } from '../core/fleet-ops.js';
import { setting, type Env, type SettingOfKind } from '../model/settings.js';
import { opencodeGeneration } from '../clients/opencode/generation.js';

export interface LaunchRequest {
  prompt: string;
  model: string | null;
  yolo: boolean;
  /** The agent's address. */
  name: string;
  /** The client's own id of the conversation to continue (a resume), or null for a new one. */
  resume: string | null;
}

export interface ClientLaunch {
  /** The setting naming its executable, and the name looked up on PATH otherwise. */
  executable: { variable: SettingOfKind<'text'>; fallback: string };
  /** The arguments of one headless run of `request`, a new conversation or the one it resumes. */
  headless(request: LaunchRequest): string[];
  /** The arguments of its interactive mode, started on `request`'s prompt: a new conversation or the one it resumes. */
  interactive(request: LaunchRequest): string[];
  /** Variables its headless run needs besides the agent's own. */
  env?: (request: LaunchRequest) => Record<string, string>;
  /** The conversation's id in what its headless run prints, where it prints one (its first match's group). */
  sessionInOutput: RegExp | null;
}

const modelArgs = (model: string | null, flag = '--model'): string[] => (model === null ? [] : [flag, model]);

/**
 * A prompt as Pi's one argument: Pi takes no `--`, and reads a word that starts with `-` as a flag and
 * one that starts with `@` as a file to attach. A leading space makes it the prompt it is.
 */
const piPrompt = (prompt: string): string => (/^[-@]/.test(prompt) ? ` ${prompt}` : prompt);

/**
 * opencode 2 runs a session in the machine's shared background service unless told --standalone
 * (1.x knows no such flag): there, the agent's own environment would not reach the bus's server and
 * plugin, and they would outlive the agent. Its own server is a child of the process spawn watches.
 */
const opencodeOwnServer = (): string[] => (opencodeGeneration(process.env).major === 2 ? ['--standalone'] : []);

export const LAUNCHES: Record<SpawnableClient, ClientLaunch> = {
  claude: {
    executable: { variable: 'AGENT_BUS_CLAUDE_BIN', fallback: 'claude' },
    // acceptEdits lets it edit in its folder; the bus's tools are allowed by server name.
    headless: ({ prompt, model, yolo, resume }) => [
      '-p',
      prompt,
      ...(resume === null ? [] : ['--resume', resume]),
      '--output-format',
      'stream-json',
      '--verbose',
      ...(yolo ? ['--dangerously-skip-permissions'] : ['--permission-mode', 'acceptEdits', '--allowedTools', 'mcp__agent-bus']),
      ...modelArgs(model),
    ],
    // The prompt is its positional argument, after `--`: --allowedTools takes every word up to the next flag.
    interactive: ({ prompt, model, yolo, resume }) => [
      ...(resume === null ? [] : ['--resume', resume]),
      ...(yolo ? ['--dangerously-skip-permissions'] : ['--permission-mode', 'acceptEdits', '--allowedTools', 'mcp__agent-bus']),
      ...modelArgs(model),
      '--',
      prompt,
    ],
    sessionInOutput: /"session_id":"([^"]+)"/,
  },
  codex: {
    executable: { variable: 'AGENT_BUS_CODEX_BIN', fallback: 'codex' },
    // Codex passes its server the variables init's env_vars names, AGENT_BUS_NAME among them. Its
    // `exec resume` takes no sandbox flag of its own: those go before it.
    headless: ({ prompt, model, yolo, resume }) => [
      'exec',
      '--json',
      ...(yolo ? ['--dangerously-bypass-approvals-and-sandbox'] : ['--sandbox', 'workspace-write']),
      ...modelArgs(model),
      ...(resume === null ? [] : ['resume', resume]),
      prompt,
    ],
    // `codex resume` takes the sandbox flags of its own.
    interactive: ({ prompt, model, yolo, resume }) => [
      ...(resume === null ? [] : ['resume']),
      ...(yolo ? ['--dangerously-bypass-approvals-and-sandbox'] : ['--sandbox', 'workspace-write']),
      ...modelArgs(model),
      '--',
      ...(resume === null ? [] : [resume]),
      prompt,
    ],
    sessionInOutput: /"thread_id":"([^"]+)"/,
  },
  opencode: {
    executable: { variable: 'AGENT_BUS_OPENCODE_BIN', fallback: 'opencode' },
    // `opencode run` rejects whatever would ask for permission; --auto approves it instead.
    headless: ({ prompt, model, yolo, resume }) => ['run', ...opencodeOwnServer(), '--format', 'json', ...(yolo ? ['--auto'] : []), ...(resume === null ? [] : ['--session', resume]), ...modelArgs(model), prompt],
    // Its TUI takes a first prompt by --prompt (its positional argument is a project's path).
    interactive: ({ prompt, model, yolo, resume }) => [...opencodeOwnServer(), ...(yolo ? ['--auto'] : []), ...(resume === null ? [] : ['--session', resume]), ...modelArgs(model), '--prompt', prompt],
    sessionInOutput: /"sessionID":"([^"]+)"/,
  },
  gemini: {
    executable: { variable: 'AGENT_BUS_GEMINI_BIN', fallback: 'gemini' },
    // Its servers are not told the session's id (only its hooks are): its stream-json output names it first, for a resume.
    headless: ({ prompt, model, yolo, resume }) => [
      '-p',
      prompt,
      ...(resume === null ? [] : ['--resume', resume]),
      '--output-format',
      'stream-json',
      '--approval-mode',
      yolo ? 'yolo' : 'auto_edit',
      ...modelArgs(model),
    ],
    // -i runs the prompt and goes on interactive.
    interactive: ({ prompt, model, yolo, resume }) => [...(resume === null ? [] : ['--resume', resume]), '--approval-mode', yolo ? 'yolo' : 'auto_edit', ...modelArgs(model), '-i', prompt],
    sessionInOutput: /"session_id":"([^"]+)"/,
  },
  copilot: {
    executable: { variable: 'AGENT_BUS_COPILOT_BIN', fallback: 'copilot' },
    headless: ({ prompt, model, yolo, resume }) => [
      '-p',
      prompt,
      ...(resume === null ? [] : [`--resume=${resume}`]),
      ...(yolo ? ['--allow-all-tools'] : ['--allow-tool', 'write', '--allow-tool', 'agent-bus']),
      '-s',
      ...modelArgs(model),
    ],
    interactive: ({ prompt, model, yolo, resume }) => [
      '-i',
      prompt,
      ...(resume === null ? [] : [`--resume=${resume}`]),
      ...(yolo ? ['--allow-all-tools'] : ['--allow-tool', 'write', '--allow-tool', 'agent-bus']),
      ...modelArgs(model),
    ],
    // In -p mode Copilot CLI runs a repo's hooks and servers only when told to.
    env: () => ({ GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS: 'true', GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP: 'true' }),
    sessionInOutput: null,
  },
  pi: {
    executable: { variable: 'AGENT_BUS_PI_BIN', fallback: 'pi' },
    // Pi asks no permission for its tools, so --yolo changes nothing. Its JSON mode runs the prompt and
    // exits, printing the session's header first: its id, for a resume (--session takes it).
    headless: ({ prompt, model, resume }) => ['--mode', 'json', ...(resume === null ? [] : ['--session', resume]), ...modelArgs(model), piPrompt(prompt)],
    interactive: ({ prompt, model, resume }) => [...(resume === null ? [] : ['--session', resume]), ...modelArgs(model), piPrompt(prompt)],
    sessionInOutput: /^\{"type":"session","version":\d+,"id":"([^"]+)"/m,
  },
  cline: {
    executable: { variable: 'AGENT_BUS_CLINE_BIN', fallback: 'cline' },
    // Cline has no mode that keeps its tools to its folder: a one-shot run approves every tool either
    // way. -y is the run that ends only by submit_and_exit, where the plugin holds a stop while mail waits.
    headless: ({ prompt, model, resume }) => ['--json', '-y', ...(resume === null ? [] : ['--id', resume]), ...modelArgs(model), prompt],
    interactive: ({ prompt, model, resume }) => ['-i', ...(resume === null ? [] : ['--id', resume]), ...modelArgs(model), prompt],
    // Its output names only the conversation, never the session --id resumes, and its plugins run in a
    // sandbox process whose output is not the run's: the bus never learns it, and resume refuses a Cline agent.
    sessionInOutput: null,
  },
  qwen: {
    executable: { variable: 'AGENT_BUS_QWEN_BIN', fallback: 'qwen' },
    // auto-edit lets it edit in its folder; the bus's server is trusted in the settings init writes.
    headless: ({ prompt, model, yolo, resume }) => [
      '-p',
      prompt,
      ...(resume === null ? [] : ['--resume', resume]),
      '--output-format',
      'stream-json',
      ...(yolo ? ['--yolo'] : ['--approval-mode', 'auto-edit']),
      ...modelArgs(model),
    ],
    // -i runs the prompt and goes on interactive.
    interactive: ({ prompt, model, yolo, resume }) => [...(resume === null ? [] : ['--resume', resume]), ...(yolo ? ['--yolo'] : ['--approval-mode', 'auto-edit']), ...modelArgs(model), '-i', prompt],
    // A headless --yolo run warns on stderr that nothing is sandboxed: the bus asked for it.
    env: ({ yolo }): Record<string, string> => (yolo ? { QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' } : {}),
    sessionInOutput: /"session_id":"([^"]+)"/,
  },
};

/** The executable to start for `client`: the setting's, else its usual name. */
export function executableOf(client: SpawnableClient, env: Env): string {
  const { variable, fallback } = LAUNCHES[client].executable;
  return setting(env, variable) || fallback;
}
