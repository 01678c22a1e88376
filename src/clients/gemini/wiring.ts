/**
 * What `agent-bus init` writes for Gemini CLI: our server and the hooks of its profile, merged into
 * the repo's `.gemini/settings.json` (settings-wiring.ts says how).
 */
import { settingsFileWiring } from '../settings-wiring.js';
import { geminiProfile } from './profile.js';

export const geminiWiring = settingsFileWiring(geminiProfile);
