/**
 * Two real clients in one repo, offline: a temp repo wired by one `agent-bus init --clients
 * claude,codex`, Claude Code and Codex each run against its own fake model, writing the same file.
 */
import { claude, codex } from './drivers.js';
import { collisionScenario } from './scenarios.js';

collisionScenario(claude, codex);
