/**
 * The extension `agent-bus init` writes for Pi, `.pi/extensions/agent-bus.ts`. It only finds the
 * installed agent-bus (the command on PATH, followed to its package) and hands Pi to that package's
 * own code (clients/pi/extension.ts): so the bridge runs agent-bus's MCP client and hook logic, never
 * a copy in the repo, and an upgrade of agent-bus upgrades it. The file is committed with the repo:
 * it names no agent and nothing of this machine. The subscriptions (CHANNELS) are the one line a user
 * edits; init keeps it.
 */
import { pluginChannels } from '../opencode/plugin.js';

export const EXTENSION_MARKER = '// Managed by `agent-bus init` — regenerated on every run; only the CHANNELS line is kept.';

/** Where the package keeps the code the file loads, under its root. */
export const RUNTIME_PATH = ['dist', 'clients', 'pi', 'extension.js'] as const;

/** The subscriptions in an extension init wrote earlier (perhaps edited since), or null. */
export function extensionChannels(source: string): string | null {
  return pluginChannels(source);
}

/** The extension's source, with the command, subscriptions and hub embedded as JSON literals. */
export function piExtensionSource(bin: string, channels: string, remote: string | null = null): string {
  // A hub's file says so in words doctor reads (AGENT_BUS_URL); this machine's names no hub at all.
  const hub = remote === null ? '// This repo\'s sessions use this machine\'s bus.\nconst HUB = null;' : `// The hub this repo's sessions reach (init --remote): their server gets it as AGENT_BUS_URL; the token is $AGENT_BUS_TOKEN.\nconst HUB = ${JSON.stringify(remote)};`;
  return `${EXTENSION_MARKER}
// agent-bus for Pi: the bus's tools, and its mail shown to the model at each prompt, between tool calls and before it stops.
// This file only finds the installed agent-bus; the work is done by that package's own code.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

// The notice channels this repo's sessions receive (comma-separated; * for all; empty for global notices only),
// unless Pi was started with AGENT_BUS_CHANNELS, which wins.
const CHANNELS = ${JSON.stringify(channels)};
const BIN = ${JSON.stringify(bin)};
${hub}
const RUNTIME = ${JSON.stringify(RUNTIME_PATH)};

/** The agent-bus BIN names (a path, else the first on PATH) and its package's folder, or null. */
function findAgentBus() {
  const candidates = BIN.includes('/') ? [BIN] : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, BIN));
  for (const bin of candidates) {
    try {
      if (!statSync(bin).isFile()) continue;
      let folder = dirname(realpathSync(bin));
      for (let up = 0; up < 6; up += 1) {
        const manifest = join(folder, 'package.json');
        if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'agent-bus') return { bin, root: folder };
        folder = dirname(folder);
      }
    } catch {
      // Not this one.
    }
  }
  return null;
}

export default async function agentBus(pi: unknown) {
  const found = findAgentBus();
  if (found === null) {
    console.error(\`agent-bus: \${BIN} is not on PATH, so this Pi session is not on the bus (npm install -g agent-bus)\`);
    return;
  }
  try {
    const { activate } = await import(pathToFileURL(join(found.root, ...RUNTIME)).href);
    activate(pi, { bin: found.bin, channels: CHANNELS, hub: HUB });
  } catch (error) {
    console.error(\`agent-bus: \${error instanceof Error ? error.message : String(error)}; this Pi session is not on the bus\`);
  }
}
`;
}
