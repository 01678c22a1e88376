/**
 * What `agent-bus init` writes for Qwen Code: our server and the hooks of its profile (Claude Code's
 * event names and shape), merged into the repo's `.qwen/settings.json` (settings-wiring.ts says how).
 * Qwen Code reads `mcpServers` as Gemini CLI does, and expands $AGENT_BUS_TOKEN in a hub's header.
 */
import type { ClientWiring } from '../wiring.js';
import { settingsFileWiring } from '../settings-wiring.js';
import { approvalProblem } from './approval.js';
import { qwenProfile } from './profile.js';

const wiring = settingsFileWiring(qwenProfile);

export const qwenWiring: ClientWiring = {
  ...wiring,
  approvalProblem: (repo, home) => approvalProblem(repo, home, wiring.files(repo)[0] as string),
};
