/**
 * What init writes for each client, by its id: one wiring per profile (the type says so). Only init
 * and doctor load this: the wirings bring the config-file parsers (TOML, JSON with comments).
 */
import { agyWiring } from '../agy/wiring.js';
import { claudeWiring } from '../claude/wiring.js';
import { clineWiring } from '../cline/wiring.js';
import { codexWiring } from '../codex/wiring.js';
import { copilotWiring } from '../copilot/wiring.js';
import { geminiWiring } from '../gemini/wiring.js';
import { opencodeWiring } from '../opencode/wiring.js';
import { piWiring } from '../pi/wiring.js';
import { qwenWiring } from '../qwen/wiring.js';
import type { ClientId } from './profiles.js';
import type { ClientWiring } from '../wiring.js';

export const WIRINGS: Record<ClientId, ClientWiring> = { agy: agyWiring, claude: claudeWiring, cline: clineWiring, codex: codexWiring, copilot: copilotWiring, gemini: geminiWiring, opencode: opencodeWiring, pi: piWiring, qwen: qwenWiring };

/** The wiring of a client init can wire, or undefined. */
export function wiringFor(client: string): ClientWiring | undefined {
  return Object.hasOwn(WIRINGS, client) ? WIRINGS[client as ClientId] : undefined;
}
