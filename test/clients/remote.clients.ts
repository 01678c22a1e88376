/**
 * The real clients on a machine without the database, wired by `agent-bus
 * init --remote` to a loopback hub, offline against fake model servers. The
 * client machine's environment holds AGENT_BUS_TOKEN and nothing of the bus:
 * the tool calls land in the hub's bus, and mail waiting before a turn reaches
 * the model through the remote hooks.
 */
import { claude, codex, copilot, gemini, opencode } from './drivers.js';
import { remoteScenarios } from './scenarios.js';

// Claude Code's server is a relay on its machine, which sends the session's id (CLAUDE_CODE_SESSION_ID)
// with each tool call: the tools speak as the session address its hooks hold.
remoteScenarios(claude, { sender: 'shop/claude-1', sessions: [['shop/claude-1', true]], readInbox: true });

// Codex sends its thread id with each tool call: the thread speaks as a session address of its own.
remoteScenarios(codex, { sender: 'shop/codex-1', sessions: [['shop/codex-1', true]], readInbox: true });

remoteScenarios(opencode, { sender: 'shop/opencode', readInbox: false });

// Gemini CLI sends no session id with its tool calls over HTTP: they speak as the client address. Its hooks do.
remoteScenarios(gemini, { sender: 'shop/gemini', sessions: [['shop/gemini-1', true]], readInbox: true });

// Copilot CLI sends no session id with its tool calls over HTTP: they speak as the client address. Its hooks do.
remoteScenarios(copilot, { sender: 'shop/copilot', sessions: [['shop/copilot-1', true]], readInbox: true });
