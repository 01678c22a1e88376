/**
 * How each real client is driven: how it is started on a machine, which fake model it talks to,
 * and what its tool calls are named there. The scenarios (scenarios.ts) speak only of these.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasToolResult, startFakeAnthropic, type Reply } from './fake-anthropic.js';
import { hasToolMessage, startFakeChat, type ChatBody, type ChatReply } from './fake-chat.js';
import { hasToolOutput, startFakeResponses, type ResponsesReply } from './fake-responses.js';
import { CLIENT_BIN, runClient, type ClientRun, type FakeServer } from './harness.js';

/** Where a client runs: the repo it works in, its HOME, a folder for its own state, and the environment it starts with. */
export interface Machine {
  repo: string;
  home: string;
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** What a scenario's fake model answers: a call of one of our MCP tools (by its plain name), or a line of text. */
export type Turn = { call: string; input: Record<string, unknown> } | { text: string };

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
  id: 'claude' | 'codex' | 'opencode';
  /** Its name in test titles. */
  label: string;
  /** Why its tests skip (it is not installed in clients/), or false. */
  skip: false | string;
  /** What a user does once on a new machine before the first run (trust the workspace). */
  prepare(machine: Machine): void;
  /** One run of `prompt` to completion against the fake model at `modelUrl`; `launch` is added to the machine's environment. */
  run(machine: Machine, modelUrl: string, prompt: string, launch?: NodeJS.ProcessEnv): Promise<ClientRun>;
  /** Its kind of fake model, answering from `script`. */
  startModel(script: Script): Promise<FakeServer>;
  /** The requests of the agent's own turns, those offering `tool` (a client's side requests left out). */
  turns(requests: readonly string[], tool: string): string[];
}

function skipUnless(id: string, name: string, env: NodeJS.ProcessEnv = process.env, timeout = 20_000): false | string {
  const bin = join(CLIENT_BIN, id);
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
  run: (machine, modelUrl, prompt, launch = {}) =>
    runClient(join(CLIENT_BIN, 'claude'), ['-p', prompt, '--output-format', 'json'], machine.repo, { ...machine.env, ...claudeOffline(modelUrl), ...launch }),
  startModel: (script) =>
    startFakeAnthropic((body, _raw, index): Reply => {
      const turn = script({ index, afterTool: hasToolResult(body), offers: () => true });
      return 'call' in turn ? { tool: `mcp__agent-bus__${turn.call}`, input: turn.input } : turn;
    }),
  turns: (requests) => [...requests],
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
  run(machine, modelUrl, prompt, launch = {}) {
    const codexHome = join(machine.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    const args = [
      'exec', '--trust', '--dangerously-bypass-hook-trust', '--json',
      '-c', 'model=fake-model', '-c', 'model_provider=fake',
      '-c', `model_providers.fake={name="fake",base_url="${modelUrl}/v1",env_key="OPENAI_API_KEY",wire_api="responses"}`,
      prompt,
    ];
    return runClient(join(CLIENT_BIN, 'codex'), args, machine.repo, { ...machine.env, ...launch, CODEX_HOME: codexHome, OPENAI_API_KEY: 'dummy' });
  },
  startModel: (script) =>
    startFakeResponses((body, _raw, index): ResponsesReply => {
      const turn = script({ index, afterTool: hasToolOutput(body), offers: () => true });
      return 'call' in turn ? { namespace: 'mcp__agent_bus', name: turn.call, input: turn.input } : turn;
    }),
  turns: (requests) => [...requests],
};

/** The name opencode offers one of our MCP tools under, if this request offers it (a title request offers none). */
function offered(body: ChatBody, tool: string): string | undefined {
  return (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith(tool));
}

/**
 * `opencode run` against a fake chat completions server. The fake provider goes in the user's
 * config under the machine's HOME (its XDG folders), so the project files stay exactly what init wrote.
 */
export const opencode: ClientDriver = {
  id: 'opencode',
  label: 'opencode',
  skip: skipUnless('opencode', 'opencode', { ...process.env, HOME: '/tmp' }, 30_000),
  prepare: () => undefined,
  run(machine, modelUrl, prompt, launch = {}) {
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
    return runClient(join(CLIENT_BIN, 'opencode'), ['run', '--format', 'json', prompt], machine.repo, {
      ...machine.env,
      ...launch,
      XDG_CONFIG_HOME: config,
      XDG_DATA_HOME: join(machine.home, '.local', 'share'),
      XDG_CACHE_HOME: join(machine.home, '.cache'),
      XDG_STATE_HOME: join(machine.home, '.local', 'state'),
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
    });
  },
  startModel: (script) =>
    startFakeChat((body, _raw, index): ChatReply => {
      const turn = script({ index, afterTool: hasToolMessage(body), offers: (tool) => offered(body, tool) !== undefined });
      if (!('call' in turn)) return turn;
      const tool = offered(body, turn.call);
      if (tool === undefined) throw new Error(`the scenario called ${turn.call}, which this request does not offer`);
      return { tool, input: turn.input };
    }),
  turns: (requests, tool) => requests.filter((raw) => raw.includes(tool)),
};
