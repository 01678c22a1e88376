/**
 * What a user sets up on a machine before the bus starts a real client there headless (`spawn`, or a
 * runner's start): the client trusts the repo and talks to the scripted model, through the variables
 * and the user's own config files a user would use. The command line is the bus's own.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claude, claudeOffline, clineAuth, copilotOffline, gemini, geminiOffline, opencodeOffline, piOffline, prepareQwenHome, qwenOffline, type ClientDriver, type Machine } from './drivers.js';
import { qwenNode, QWEN_ENTRY } from './qwen-node.js';
import { CLIENT_BIN, OPENCODE1_BIN } from './harness.js';

/**
 * Each client's set-up on `machine` against the model at `modelUrl`: its config files written, and the
 * variables the bus's start must find in its environment. What the test drivers pass as flags is set
 * here as a user would, since the command line is the bus's own.
 */
export const setUp: Record<ClientDriver['id'], (machine: Machine, modelUrl: string) => NodeJS.ProcessEnv> = {
  claude(machine, modelUrl) {
    claude.prepare(machine);
    return { ...claudeOffline(modelUrl), AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude') };
  },
  codex(machine, modelUrl) {
    const codexHome = join(machine.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "fake-model"',
        'model_provider = "fake"',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${modelUrl}/v1"`,
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        `[projects.${JSON.stringify(machine.repo)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    return { CODEX_HOME: codexHome, OPENAI_API_KEY: 'dummy', AGENT_BUS_CODEX_BIN: join(CLIENT_BIN, 'codex') };
  },
  // The fake provider as its model in the user's config; opencode asks nothing before it runs a repo's plugin and server.
  opencode(machine, modelUrl) {
    return { ...opencodeOffline(machine, modelUrl), AGENT_BUS_OPENCODE_BIN: OPENCODE1_BIN };
  },
  // API-key sign-in in the user's settings, the key and the fake's address, the workspace trusted.
  gemini(machine, modelUrl) {
    gemini.prepare(machine);
    return { ...geminiOffline(modelUrl), AGENT_BUS_GEMINI_BIN: join(CLIENT_BIN, 'gemini') };
  },
  // A provider of the user's own, no GitHub sign-in. Nothing allows all tools (COPILOT_ALLOW_ALL): the
  // bus's --allow-tool flags are all that lets it call the bus's tools, and its launch variables load
  // the repo's hooks and server in -p mode.
  copilot(_machine, modelUrl) {
    return { ...copilotOffline(modelUrl), AGENT_BUS_COPILOT_BIN: join(CLIENT_BIN, 'copilot') };
  },
  // The fake provider in Pi's own folder, chosen as its default model in its settings, as a user picks one.
  pi(machine, modelUrl) {
    const env = piOffline(machine, modelUrl);
    writeFileSync(join(env.PI_CODING_AGENT_DIR as string, 'settings.json'), JSON.stringify({ defaultProvider: 'fake', defaultModel: 'fake-model' }));
    return { ...env, AGENT_BUS_PI_BIN: join(CLIENT_BIN, 'pi') };
  },
  // The fake provider signed in through `cline auth`, its state under the machine's HOME.
  cline(machine, modelUrl) {
    clineAuth(machine, modelUrl);
    return { AGENT_BUS_CLINE_BIN: join(CLIENT_BIN, 'cline') };
  },
  // Anthropic as its sign-in in the user's settings, and the repo's agent-bus server approved, as the user
  // does once (Qwen Code starts a project's server outside --yolo only once approved). Its executable is
  // one that runs it on Node.js 22, as a user whose own Node.js is older would install it.
  qwen(machine, modelUrl) {
    prepareQwenHome(machine.home);
    approveQwenServer(machine);
    const bin = join(machine.dir, 'qwen-on-22');
    writeFileSync(bin, `#!/bin/sh\nexec '${qwenNode() ?? 'node'}' '${QWEN_ENTRY}' "$@"\n`);
    chmodSync(bin, 0o755);
    return { ...qwenOffline(modelUrl), AGENT_BUS_QWEN_BIN: bin };
  },
};

/**
 * What approving the repo's agent-bus server in Qwen Code leaves (~/.qwen/mcpApprovals.json): the
 * server's entry as init wrote it, bound to a hash of it (sha256 of its JSON, keys sorted), so an
 * edited entry asks again.
 */
export function approveQwenServer(machine: Pick<Machine, 'repo' | 'home'>): void {
  const entry = (JSON.parse(readFileSync(join(machine.repo, '.qwen', 'settings.json'), 'utf8')) as { mcpServers: Record<string, unknown> }).mcpServers['agent-bus'];
  const sorted = JSON.stringify(entry, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value,
  );
  const hash = createHash('sha256').update(sorted).digest('hex');
  writeFileSync(join(machine.home, '.qwen', 'mcpApprovals.json'), JSON.stringify({ [machine.repo]: { 'agent-bus': { hash, status: 'approved' } } }));
}
