/**
 * How each real client is driven: how it is started on a machine, which fake model it talks to,
 * and what its tool calls are named there. The scenarios (scenarios.ts) speak only of these.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasToolResult, offersTool, resultText, startFakeAnthropic, toolResults, type Reply } from './fake-anthropic.js';
import { hasToolMessage, startFakeChat, toolMessages, type ChatBody, type ChatReply } from './fake-chat.js';
import { hasToolOutput, startFakeResponses, toolOutputs, type ResponsesBody, type ResponsesReply } from './fake-responses.js';
import { functionResponses, hasFunctionResponse, offeredTools, startFakeGemini, type GeminiReply } from './fake-gemini.js';
import { CLIENT_BIN, OPENCODE1_BIN, OPENCODE2_BIN, runClient, type ClientRun, type FakeServer } from './harness.js';
import { qwenNode, QWEN_ENTRY } from './qwen-node.js';

/** Where a client runs: the repo it works in, its HOME, a folder for its own state, and the environment it starts with. */
export interface Machine {
  repo: string;
  home: string;
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** A change of one whole line of a file, by its absolute path: what a model asks of its client's own file-editing tool. */
export interface FileEdit {
  file: string;
  /** The line as it is, without its line break; it occurs once in the file. */
  old: string;
  /** The line it becomes. */
  new: string;
}

/**
 * What a scenario's fake model answers: a call of one of our MCP tools (by its plain name), an edit
 * of a file through the client's own editing tool (each driver names it in its client's terms), a
 * command run through the client's own shell tool (where the driver has one: `shellTool`), or a line
 * of text.
 */
export type Turn = { call: string; input: Record<string, unknown> } | { edit: FileEdit } | { shell: string } | { text: string };

/** How a run differs from a plain one. */
export interface RunOptions {
  /**
   * The model edits files with the client's own tool: the client is started the way a user who lets
   * it edit does (Claude Code in acceptEdits mode; Codex with a model whose metadata offers apply_patch).
   */
  edits?: boolean;
}

/** One request to the fake model, as a scenario sees it. */
export interface ModelRequest {
  /** 1 for the first request. */
  index: number;
  /** The request carries the result of the tool call the model made last. */
  afterTool: boolean;
  /** The request offers our MCP tool `tool` (a client's side requests, such as a title, offer none). */
  offers(tool: string): boolean;
}

export type Script = (request: ModelRequest) => Turn;

export interface ClientDriver {
  /** The client part of its address (`shop/<id>`) and its `--clients` id. */
  id: 'claude' | 'codex' | 'opencode' | 'gemini' | 'copilot' | 'pi' | 'qwen' | 'cline';
  /** Its name in test titles. */
  label: string;
  /** Why its tests skip (it is not installed in clients/), or false. */
  skip: false | string;
  /** What a user does once on a new machine before the first run (trust the workspace). */
  prepare(machine: Machine): void;
  /** One run of `prompt` to completion against the fake model at `modelUrl`; `launch` is added to the machine's environment. */
  run(machine: Machine, modelUrl: string, prompt: string, launch?: NodeJS.ProcessEnv, options?: RunOptions): Promise<ClientRun>;
  /** Its kind of fake model, answering from `script`. */
  startModel(script: Script): Promise<FakeServer>;
  /** The requests of the agent's own turns, those offering `tool` (a client's side requests left out). */
  turns(requests: readonly string[], tool: string): string[];
  /** The client's own tool a `{ edit }` turn calls, by the name the model calls it. */
  editTool: string;
  /** The client's own shell tool a `{ shell }` turn calls, by the name its hooks give it; none where the driver has no shell turn. */
  shellTool?: string;
  /** The texts of the tool results a model request carries, in order. */
  toolResults(raw: string): string[];
  /** What init is run with for this client beside the usual (harness.ts initVersions): which executable it asks for its version. */
  initEnv?: NodeJS.ProcessEnv;
}

function skipUnless(id: string, name: string, env: NodeJS.ProcessEnv = process.env, timeout = 20_000, bin = join(CLIENT_BIN, id)): false | string {
  const runnable = existsSync(bin) && spawnSync(bin, ['--version'], { encoding: 'utf8', timeout, env }).status === 0;
  return runnable ? false : `${name} is not installed in clients/ (npm run test:clients installs it)`;
}

/** What keeps a Claude Code run offline against a fake model: no telemetry, no updates. */
export function claudeOffline(modelUrl: string): NodeJS.ProcessEnv {
  return {
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'dummy',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

/** Claude Code in print mode against a fake Anthropic Messages API; our tools are `mcp__agent-bus__<tool>`. */
export const claude: ClientDriver = {
  id: 'claude',
  label: 'Claude Code',
  skip: skipUnless('claude', 'Claude Code'),
  prepare(machine) {
    // What the user does at the first-run prompt: trust this workspace.
    writeFileSync(join(machine.home, '.claude.json'), JSON.stringify({ projects: { [machine.repo]: { hasTrustDialogAccepted: true } } }));
  },
  run: (machine, modelUrl, prompt, launch = {}, options = {}) =>
    runClient(
      join(CLIENT_BIN, 'claude'),
      ['-p', prompt, '--output-format', 'json', ...(options.edits ? ['--permission-mode', 'acceptEdits'] : [])],
      machine.repo,
      { ...machine.env, ...claudeOffline(modelUrl), ...launch },
    ),
  startModel: (script) =>
    startFakeAnthropic((body, _raw, index): Reply => {
      const turn = script({ index, afterTool: hasToolResult(body), offers: () => true });
      if ('call' in turn) return { tool: `mcp__agent-bus__${turn.call}`, input: turn.input };
      if ('edit' in turn) return { tool: 'Edit', input: { file_path: turn.edit.file, old_string: turn.edit.old, new_string: turn.edit.new } };
      if ('shell' in turn) return { tool: 'Bash', input: { command: turn.shell, description: 'Run the command' } };
      return turn;
    }),
  turns: (requests) => [...requests],
  editTool: 'Edit',
  shellTool: 'Bash',
  toolResults,
};

/**
 * `codex exec` against a fake Responses API, its state in the machine's folder, trusting the project
 * and its hooks (--trust, --dangerously-bypass-hook-trust) the way a user would. Codex offers an MCP
 * server's tools as a namespace, its name made safe: agent-bus → mcp__agent_bus.
 */
export const codex: ClientDriver = {
  id: 'codex',
  label: 'Codex',
  skip: skipUnless('codex', 'Codex'),
  prepare: () => undefined,
  run(machine, modelUrl, prompt, launch = {}, options = {}) {
    const codexHome = join(machine.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    // A model Codex knows the metadata of is offered apply_patch (a freeform tool); fake-model gets fallback metadata, without it.
    const model = options.edits ? 'gpt-5.5' : 'fake-model';
    const args = [
      'exec', '--trust', '--dangerously-bypass-hook-trust', '--json',
      '-c', `model=${model}`, '-c', 'model_provider=fake',
      '-c', `model_providers.fake={name="fake",base_url="${modelUrl}/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`,
      prompt,
    ];
    return runClient(join(CLIENT_BIN, 'codex'), args, machine.repo, { ...machine.env, ...launch, CODEX_HOME: codexHome, OPENAI_API_KEY: 'dummy' });
  },
  startModel: (script) =>
    startFakeResponses((body, _raw, index): ResponsesReply => {
      const turn = script({ index, afterTool: hasToolOutput(body), offers: () => true });
      if ('call' in turn) return { namespace: 'mcp__agent_bus', name: turn.call, input: turn.input };
      if ('edit' in turn) return { custom: 'apply_patch', input: applyPatch(turn.edit) };
      if ('shell' in turn) return codexShellCall(body, turn.shell);
      return turn;
    }),
  turns: (requests) => [...requests],
  editTool: 'apply_patch',
  shellTool: 'Bash',
  toolResults: toolOutputs,
};

/**
 * A command through the shell tool this Codex request offers, in that tool's arguments: `exec_command`
 * (`cmd`), `shell_command` (`command`, a string) or `shell` (`command`, an argv).
 */
function codexShellCall(body: ResponsesBody, command: string): ResponsesReply {
  const offered = new Set((body.tools ?? []).map((tool) => tool.name ?? ''));
  if (offered.has('exec_command')) return { namespace: null, name: 'exec_command', input: { cmd: command } };
  if (offered.has('shell_command')) return { namespace: null, name: 'shell_command', input: { command } };
  if (offered.has('shell')) return { namespace: null, name: 'shell', input: { command: ['bash', '-lc', command] } };
  throw new Error(`the scenario ran a command, and this request offers no shell tool: ${[...offered].join(', ')}`);
}

/** An edit as the patch Codex's apply_patch takes. */
function applyPatch(edit: FileEdit): string {
  return ['*** Begin Patch', `*** Update File: ${edit.file}`, '@@', `-${edit.old}`, `+${edit.new}`, '*** End Patch', ''].join('\n');
}

/** The name opencode offers one of our MCP tools under, if this request offers it (a title request offers none). */
function offered(body: ChatBody, tool: string): string | undefined {
  return (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith(tool));
}

/**
 * What keeps an opencode run offline against a fake chat completions server: the fake provider as the
 * model in the user's config under the machine's HOME (its XDG folders), so the project files stay
 * exactly what init wrote; no model list fetched, no updates, no sharing.
 */
export function opencodeOffline(machine: Machine, modelUrl: string): NodeJS.ProcessEnv {
  const config = join(machine.home, '.config');
  mkdirSync(join(config, 'opencode'), { recursive: true });
  writeFileSync(
    join(config, 'opencode', 'opencode.json'),
    JSON.stringify({
      model: 'fake/fake-model',
      small_model: 'fake/fake-model',
      autoupdate: false,
      share: 'disabled',
      provider: {
        fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake', options: { baseURL: `${modelUrl}/v1`, apiKey: 'dummy' }, models: { 'fake-model': { name: 'Fake Model', tool_call: true } } },
      },
    }),
  );
  return {
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: join(machine.home, '.local', 'share'),
    XDG_CACHE_HOME: join(machine.home, '.cache'),
    XDG_STATE_HOME: join(machine.home, '.local', 'state'),
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}

/** A fake chat model for opencode answering from `script`: `edit` takes the file in `fileKey` (`filePath` in 1.x, `path` in 2). */
function opencodeModel(script: Script, fileKey: 'filePath' | 'path'): Promise<FakeServer> {
  return startFakeChat((body, _raw, index): ChatReply => {
    const turn = script({ index, afterTool: hasToolMessage(body), offers: (tool) => offered(body, tool) !== undefined });
    if ('edit' in turn) {
      if (!(body.tools ?? []).some((entry) => entry.function?.name === 'edit')) throw new Error('the scenario edited a file, and this request does not offer edit');
      return { tool: 'edit', input: { [fileKey]: turn.edit.file, oldString: turn.edit.old, newString: turn.edit.new } };
    }
    if ('shell' in turn) return { tool: 'bash', input: { command: turn.shell, description: 'Run the command' } };
    if (!('call' in turn)) return turn;
    const tool = offered(body, turn.call);
    if (tool === undefined) throw new Error(`the scenario called ${turn.call}, which this request does not offer`);
    return { tool, input: turn.input };
  });
}

/** `opencode run` against a fake chat completions server, offline (opencodeOffline). */
export const opencode: ClientDriver = {
  id: 'opencode',
  label: 'opencode',
  skip: skipUnless('opencode', 'opencode', { ...process.env, HOME: '/tmp' }, 30_000, OPENCODE1_BIN),
  prepare: () => undefined,
  run: (machine, modelUrl, prompt, launch = {}) =>
    runClient(OPENCODE1_BIN, ['run', '--format', 'json', prompt], machine.repo, { ...machine.env, ...launch, ...opencodeOffline(machine, modelUrl) }),
  startModel: (script) => opencodeModel(script, 'filePath'),
  turns: (requests, tool) => requests.filter((raw) => raw.includes(tool)),
  editTool: 'edit',
  shellTool: 'bash',
  toolResults: toolMessages,
  initEnv: { AGENT_BUS_OPENCODE_BIN: OPENCODE1_BIN },
};

/**
 * opencode 2: `opencode run --standalone` (a private server of the run's own, where a plain run would
 * start or join the machine's shared background service, which outlives it) with stdin closed (it
 * waits on a piped one), offline as 1.x is. Init is asked with this opencode, so it writes 2.x's shape.
 */
export const opencode2: ClientDriver = {
  id: 'opencode',
  label: 'opencode 2',
  skip: skipUnless('opencode', 'opencode 2', { ...process.env, HOME: '/tmp' }, 30_000, OPENCODE2_BIN),
  prepare: () => undefined,
  run: (machine, modelUrl, prompt, launch = {}) =>
    runClient(OPENCODE2_BIN, ['run', '--standalone', '--format', 'json', prompt], machine.repo, { ...machine.env, ...launch, ...opencodeOffline(machine, modelUrl) }),
  startModel: (script) => opencodeModel(script, 'path'),
  turns: (requests, tool) => requests.filter((raw) => raw.includes(tool)),
  editTool: 'edit',
  shellTool: 'bash',
  toolResults: toolMessages,
  initEnv: { AGENT_BUS_OPENCODE_BIN: OPENCODE2_BIN },
};

/** What keeps a Gemini CLI run offline against a fake Gemini API: an API key, the fake's address, the workspace trusted. */
export function geminiOffline(modelUrl: string): NodeJS.ProcessEnv {
  return { GOOGLE_GEMINI_BASE_URL: modelUrl, GEMINI_API_KEY: 'dummy', GEMINI_CLI_TRUST_WORKSPACE: 'true', NO_BROWSER: 'true' };
}

/**
 * `gemini -p … --yolo` against a fake Gemini API. The user's settings choose API-key sign-in, as a
 * user who pastes a key does; the project's settings are what init wrote. Gemini CLI offers an MCP
 * server's tools as `mcp_<server>_<tool>`.
 */
export const gemini: ClientDriver = {
  id: 'gemini',
  label: 'Gemini CLI',
  skip: skipUnless('gemini', 'Gemini CLI', { ...process.env, HOME: '/tmp' }, 30_000),
  prepare(machine) {
    mkdirSync(join(machine.home, '.gemini'), { recursive: true });
    writeFileSync(join(machine.home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }));
  },
  run: (machine, modelUrl, prompt, launch = {}) => runClient(join(CLIENT_BIN, 'gemini'), ['-p', prompt, '--yolo'], machine.repo, { ...machine.env, ...geminiOffline(modelUrl), ...launch }),
  startModel: (script) =>
    startFakeGemini((body, _raw, index): GeminiReply => {
      const turn = script({ index, afterTool: hasFunctionResponse(body), offers: (tool) => offeredTools(body).includes(`mcp_agent-bus_${tool}`) });
      if ('call' in turn) return { call: `mcp_agent-bus_${turn.call}`, args: turn.input };
      if ('edit' in turn) return { call: 'replace', args: { file_path: turn.edit.file, old_string: turn.edit.old, new_string: turn.edit.new, instruction: 'edit the line' } };
      if ('shell' in turn) return { call: 'run_shell_command', args: { command: turn.shell, description: 'Run the command' } };
      return turn;
    }),
  turns: (requests) => [...requests],
  editTool: 'replace',
  shellTool: 'run_shell_command',
  toolResults: functionResponses,
};

/** What keeps a Copilot CLI run offline against a fake Anthropic Messages API: no GitHub sign-in, the provider ours. */
export function copilotOffline(modelUrl: string): NodeJS.ProcessEnv {
  return {
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: modelUrl,
    COPILOT_PROVIDER_TYPE: 'anthropic',
    COPILOT_PROVIDER_API_KEY: 'dummy',
    COPILOT_MODEL: 'claude-sonnet-4.5',
  };
}

/**
 * `copilot -p … --allow-all-tools` against a fake Anthropic Messages API. The folder is trusted and
 * repo hooks and workspace MCP allowed in prompt mode, as a user who trusts the repo does
 * (COPILOT_ALLOW_ALL, GITHUB_COPILOT_PROMPT_MODE_*). Copilot CLI offers an MCP server's tools as
 * `<server>-<tool>`.
 */
export const copilot: ClientDriver = {
  id: 'copilot',
  label: 'Copilot CLI',
  skip: skipUnless('copilot', 'Copilot CLI', { ...process.env, HOME: '/tmp' }, 30_000),
  prepare: () => undefined,
  run: (machine, modelUrl, prompt, launch = {}) =>
    runClient(join(CLIENT_BIN, 'copilot'), ['-p', prompt, '--allow-all-tools', '-s'], machine.repo, {
      ...machine.env,
      ...copilotOffline(modelUrl),
      COPILOT_ALLOW_ALL: 'true',
      GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS: 'true',
      GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP: 'true',
      ...launch,
    }),
  startModel: (script) =>
    startFakeAnthropic((body, _raw, index): Reply => {
      const name = (tool: string): string | undefined => (body.tools ?? []).map((entry) => entry.name ?? '').find((offered) => offered.endsWith(`-${tool}`) && offered.startsWith('agent-bus'));
      const turn = script({ index, afterTool: hasToolResult(body), offers: (tool) => name(tool) !== undefined });
      if ('call' in turn) return { tool: name(turn.call) ?? `agent-bus-${turn.call}`, input: turn.input };
      if ('edit' in turn) return { tool: 'edit', input: { path: turn.edit.file, old_str: turn.edit.old, new_str: turn.edit.new } };
      if ('shell' in turn) return { tool: 'bash', input: { command: turn.shell, description: 'Run the command' } };
      return turn;
    }),
  turns: (requests) => [...requests],
  editTool: 'edit',
  shellTool: 'bash',
  toolResults,
};

/**
 * What keeps a Pi run offline against a fake Anthropic Messages API: its own folder (PI_CODING_AGENT_DIR)
 * in the machine's, whose models.json names the fake as a provider, and no network look-ups (PI_OFFLINE).
 */
export function piOffline(machine: Machine, modelUrl: string): NodeJS.ProcessEnv {
  const agentDir = join(machine.dir, 'pi-agent');
  mkdirSync(agentDir, { recursive: true });
  const model = { id: 'fake-model', name: 'Fake', reasoning: false, input: ['text'], contextWindow: 200_000, maxTokens: 4096 };
  writeFileSync(join(agentDir, 'models.json'), JSON.stringify({ providers: { fake: { baseUrl: modelUrl, api: 'anthropic-messages', apiKey: 'dummy', models: [model] } } }));
  return { PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: '1' };
}

/** Pi's arguments for the fake model, without a session file. */
export const PI_MODEL_ARGS = ['--no-session', '--provider', 'fake', '--model', 'fake-model'];

/** Whether the request carries a tool's result since the model last spoke (Pi may steer a message in after it). */
function piAfterTool(body: Parameters<typeof hasToolResult>[0]): boolean {
  const messages = body.messages ?? [];
  const lastAssistant = messages.map((message) => message.role).lastIndexOf('assistant');
  return lastAssistant >= 0 && messages.slice(lastAssistant + 1).some((message) => hasToolResult({ messages: [message] }));
}

/**
 * `pi -p` against a fake Anthropic Messages API, offline (piOffline). The repo's extension, as init
 * wrote it, offers our tools under their own names; Pi's own are `edit` (a path and its edits) and `bash`.
 */
export const pi: ClientDriver = {
  id: 'pi',
  label: 'Pi',
  skip: skipUnless('pi', 'Pi', { ...process.env, HOME: '/tmp' }),
  prepare: () => undefined,
  run: (machine, modelUrl, prompt, launch = {}) => runClient(join(CLIENT_BIN, 'pi'), ['-p', ...PI_MODEL_ARGS, prompt], machine.repo, { ...machine.env, ...piOffline(machine, modelUrl), ...launch }),
  startModel: (script) =>
    startFakeAnthropic((body, _raw, index): Reply => {
      const turn = script({ index, afterTool: piAfterTool(body), offers: (tool) => offersTool(body, tool) });
      if ('call' in turn) return { tool: turn.call, input: turn.input };
      if ('edit' in turn) return { tool: 'edit', input: { path: turn.edit.file, edits: [{ oldText: turn.edit.old, newText: turn.edit.new }] } };
      if ('shell' in turn) return { tool: 'bash', input: { command: turn.shell } };
      return turn;
    }),
  turns: (requests) => [...requests],
  editTool: 'edit',
  shellTool: 'bash',
  toolResults,
};

/** The words a Cline run ends with: it takes at least ten characters. */
function clineSummary(text: string): string {
  return text.length >= 10 ? text : `${text} (submitted)`;
}

/**
 * Cline CLI pointed at a fake chat completions server on 127.0.0.1, as `cline auth` does for an
 * OpenAI-compatible provider with a base URL, its state under the machine's HOME (~/.cline), where
 * init wrote its MCP settings.
 */
export function clineAuth(machine: Machine, modelUrl: string): void {
  const auth = spawnSync(join(CLIENT_BIN, 'cline'), ['auth', '--provider', 'openai', '--apikey', 'dummy', '--modelid', 'fake-model', '--baseurl', `${modelUrl}/v1`], {
    cwd: machine.repo,
    env: machine.env,
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  if (auth.status !== 0) throw new Error(`cline auth failed: ${auth.stderr}${auth.stdout}`);
}

/**
 * `cline --json -y` against a fake chat completions server. A headless run ends only when the model
 * calls `submit_and_exit`, so a scenario's line of text is that call, the text its summary. Cline
 * offers an MCP server's tools as `<server>__<tool>`; it ignores SIGTERM, and runClient kills it with
 * SIGKILL past its time.
 */
export const cline: ClientDriver = {
  id: 'cline',
  label: 'Cline CLI',
  skip: skipUnless('cline', 'Cline CLI', { ...process.env, HOME: '/tmp' }, 30_000),
  prepare: () => undefined,
  run(machine, modelUrl, prompt, launch = {}) {
    clineAuth(machine, modelUrl);
    return runClient(join(CLIENT_BIN, 'cline'), ['--json', '-y', prompt], machine.repo, { ...machine.env, ...launch });
  },
  startModel: (script) =>
    startFakeChat((body, _raw, index): ChatReply => {
      const turn = script({ index, afterTool: hasToolMessage(body), offers: (tool) => offered(body, `agent-bus__${tool}`) !== undefined });
      if ('call' in turn) return { tool: `agent-bus__${turn.call}`, input: turn.input };
      if ('edit' in turn) return { tool: 'editor', input: { path: turn.edit.file, old_text: turn.edit.old, new_text: turn.edit.new } };
      if ('shell' in turn) return { tool: 'run_commands', input: { commands: [turn.shell] } };
      return { tool: 'submit_and_exit', input: { summary: clineSummary(turn.text), verified: true } };
    }),
  turns: (requests) => [...requests],
  editTool: 'editor',
  shellTool: 'run_commands',
  toolResults: toolMessages,
};
/**
 * What keeps a Qwen Code run offline against a fake Anthropic Messages API: the key and address in
 * its environment, and in the user's settings Anthropic as the sign-in, the model, and none of its
 * own background requests (memory extraction, follow-up suggestions, statistics, updates).
 */
export function qwenOffline(modelUrl: string): NodeJS.ProcessEnv {
  return { ANTHROPIC_API_KEY: 'dummy', ANTHROPIC_BASE_URL: modelUrl, ANTHROPIC_MODEL: 'claude-fake', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' };
}

/** The user settings qwenOffline needs beside its environment, written under the machine's HOME. */
export function prepareQwenHome(home: string): void {
  mkdirSync(join(home, '.qwen'), { recursive: true });
  writeFileSync(
    join(home, '.qwen', 'settings.json'),
    JSON.stringify({
      security: { auth: { selectedType: 'anthropic' } },
      model: { name: 'claude-fake' },
      memory: { enableManagedAutoMemory: false },
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false },
      ui: { enableFollowupSuggestions: false },
    }),
  );
}

/** The tools the Qwen Code driver calls on its own, before a scenario's call or edit: their results are not the scenario's. */
const QWEN_DRIVER_STEPS = new Set(['tool_search', 'read_file']);

type QwenBody = { messages?: Array<{ role: string; content: unknown }> };
type Part = { type?: string; id?: string; name?: string; tool_use_id?: string; content?: unknown };

/** The ids of the driver's own tool calls in a request's conversation. */
function driverStepIds(body: QwenBody): Set<string> {
  const parts = (body.messages ?? []).flatMap((message) => (message.role === 'assistant' && Array.isArray(message.content) ? (message.content as Part[]) : []));
  return new Set(parts.filter((part) => part.type === 'tool_use' && QWEN_DRIVER_STEPS.has(part.name ?? '')).map((part) => part.id ?? ''));
}

/** The texts of the tool results a request carries, less those of the driver's own steps. */
function qwenToolResults(raw: string): string[] {
  const body = JSON.parse(raw) as QwenBody;
  const own = driverStepIds(body);
  return (body.messages ?? []).flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Part[]).filter((part) => part.type === 'tool_result' && !own.has(part.tool_use_id ?? '')).map((part) => resultText(part.content)) : [],
  );
}

/** A request's last message carries only the results of the driver's own steps. */
function afterDriverStep(raw: string): boolean {
  const body = JSON.parse(raw) as QwenBody;
  const own = driverStepIds(body);
  const last = body.messages?.at(-1)?.content;
  const results = Array.isArray(last) ? (last as Part[]).filter((part) => part.type === 'tool_result') : [];
  return results.length > 0 && results.every((part) => own.has(part.tool_use_id ?? ''));
}

/**
 * `qwen -p … --yolo` on Node.js 22 (qwenNode) against a fake Anthropic Messages API. Qwen Code lists
 * an MCP server's tools (`mcp__agent-bus__<tool>`) in a reminder and defers them: a model looks a
 * tool up with `tool_search` once, then calls it through `tool_call {name, arguments}`. Its `edit`
 * takes only a file read in the session. The driver makes those steps itself, each in a request of
 * its own, so a scenario's script sees only its own calls and their results.
 */
export const qwen: ClientDriver = {
  id: 'qwen',
  label: 'Qwen Code',
  // Asked once, when a test first wants it: the Node.js 22 it needs may have to be fetched.
  get skip(): false | string {
    return qwenSkip();
  },
  prepare: (machine) => prepareQwenHome(machine.home),
  run: (machine, modelUrl, prompt, launch = {}) => runClient(qwenNode() ?? 'node', [QWEN_ENTRY, '-p', prompt, '--yolo'], machine.repo, { ...machine.env, ...qwenOffline(modelUrl), ...launch }),
  startModel(script) {
    const searched = new Set<string>();
    const read = new Set<string>();
    let pending: Reply | null = null;
    return startFakeAnthropic((body, raw, index): Reply => {
      if (pending !== null) {
        const next = pending;
        pending = null;
        return next;
      }
      // Its own side requests (a title, a summary) offer no tool_search.
      const agentTurn = offersTool(body, 'tool_search');
      const turn = script({ index, afterTool: hasToolResult(body), offers: (tool) => agentTurn && raw.includes(`mcp__agent-bus__${tool}`) });
      if ('call' in turn) {
        const name = `mcp__agent-bus__${turn.call}`;
        const call: Reply = { tool: 'tool_call', input: { name, arguments: turn.input } };
        if (searched.has(name)) return call;
        searched.add(name);
        pending = call;
        return { tool: 'tool_search', input: { query: `select:${name}` } };
      }
      if ('edit' in turn) {
        const edit: Reply = { tool: 'edit', input: { file_path: turn.edit.file, old_string: turn.edit.old, new_string: turn.edit.new } };
        if (read.has(turn.edit.file)) return edit;
        read.add(turn.edit.file);
        pending = edit;
        return { tool: 'read_file', input: { file_path: turn.edit.file } };
      }
      if ('shell' in turn) return { tool: 'run_shell_command', input: { command: turn.shell, description: 'Run the command' } };
      return turn;
    });
  },
  // The agent's turns, less the requests that carry only the driver's own steps' results.
  turns: (requests) => requests.filter((raw) => !afterDriverStep(raw)),
  editTool: 'edit',
  shellTool: 'run_shell_command',
  toolResults: qwenToolResults,
};

let qwenSkipped: false | string | undefined;

/** Why Qwen Code's tests skip: no Node.js 22 to run it on, or it is not installed in clients/. */
function qwenSkip(): false | string {
  if (qwenSkipped !== undefined) return qwenSkipped;
  const node = qwenNode();
  if (node === null) return (qwenSkipped = 'Qwen Code needs Node.js 22 or later, and none could be had (scripts/test-on-node.ts --fetch-only 22.23.5 fetches it)');
  const runnable = existsSync(QWEN_ENTRY) && spawnSync(node, [QWEN_ENTRY, '--version'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: '/tmp' } }).status === 0;
  return (qwenSkipped = runnable ? false : 'Qwen Code is not installed in clients/ (npm run test:clients installs it)');
}
