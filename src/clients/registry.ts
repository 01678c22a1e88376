/** Every client init can wire, by its id: each module owns what init writes for it. */
import { agyWiring } from './agy.js';
import { claudeWiring } from './claude.js';
import { codexWiring } from './codex.js';
import { opencodeWiring } from './opencode.js';
import type { ClientWiring } from './wiring.js';

export const WIRINGS: Record<string, ClientWiring> = { agy: agyWiring, claude: claudeWiring, codex: codexWiring, opencode: opencodeWiring };
