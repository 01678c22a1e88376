/**
 * What `agent-bus init` writes for Qwen Code: our server and the hooks of its profile (Claude Code's
 * event names and shape), merged into the repo's `.qwen/settings.json` (settings-wiring.ts says how).
 * Qwen Code reads `mcpServers` as Gemini CLI does, and expands $AGENT_BUS_TOKEN in a hub's header.
 */
import { settingsFileWiring } from '../settings-wiring.js';
import { qwenProfile } from './profile.js';

export const qwenWiring = settingsFileWiring(qwenProfile);
