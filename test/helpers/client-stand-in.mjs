#!/usr/bin/env node
// A stand-in for a client (`claude`, `codex`) that does for the bus what starting the client does:
// it reads the agent-bus server the repo's committed wiring names (Claude Code: .mcp.json, with the
// `env` of .claude/settings.json and .claude/settings.local.json; Codex: .codex/config.toml, with
// Codex's short list of passed-on variables and `env_vars`), starts it from the folder it runs in
// through the official MCP SDK, and calls `whoami`, so the session joins. Then, as a model taking its
// mail, it reads its inbox until it is stopped. It prints one JSON line per event on stdout:
// {"joined": NAME}, then {"read": MESSAGE} for each message taken.
import { existsSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseToml } from 'smol-toml';

const client = process.argv[2];
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

/** The `env` block of a Claude Code settings file, or nothing when there is none. */
function settingsEnv(path) {
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')).env ?? {}) : {};
}

// Codex gives a stdio MCP server only these of its own environment on Linux, then what `env_vars`
// names, then the server's `env` table.
const CODEX_PASSED = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'USER', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'TZ'];

function serverOf(id) {
  if (id === 'claude') {
    const entry = JSON.parse(readFileSync('.mcp.json', 'utf8')).mcpServers?.['agent-bus'];
    if (!entry) throw new Error('.mcp.json has no agent-bus server');
    const env = { ...process.env, ...settingsEnv('.claude/settings.json'), ...settingsEnv('.claude/settings.local.json'), ...(entry.env ?? {}) };
    return { command: entry.command, args: entry.args ?? [], env };
  }
  if (id === 'codex') {
    const entry = parseToml(readFileSync('.codex/config.toml', 'utf8')).mcp_servers?.['agent-bus'];
    if (!entry) throw new Error('.codex/config.toml has no [mcp_servers.agent-bus]');
    const passed = [...CODEX_PASSED, ...(entry.env_vars ?? [])].filter((name) => process.env[name] !== undefined);
    const env = { ...Object.fromEntries(passed.map((name) => [name, process.env[name]])), ...(entry.env ?? {}) };
    return { command: entry.command, args: entry.args ?? [], env };
  }
  throw new Error(`no stand-in for the client ${id}`);
}

const server = serverOf(client);
const transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, cwd: process.cwd(), stderr: 'inherit' });
const mcp = new Client({ name: `${client}-stand-in`, version: '1.0.0' });
await mcp.connect(transport);

async function call(name, args = {}) {
  const result = await mcp.callTool({ name, arguments: args });
  const text = result.content?.[0]?.text ?? '';
  if (result.isError) throw new Error(`${name}: ${text}`);
  return JSON.parse(text);
}

say({ joined: (await call('whoami')).name });

let stopping = false;
const stop = async () => {
  stopping = true;
  await mcp.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

while (!stopping) {
  const mail = await call('read_inbox', { mark_read: true });
  for (const message of Array.isArray(mail) ? mail : (mail.result ?? mail.messages ?? [])) say({ read: message });
  await new Promise((resolve) => setTimeout(resolve, 100));
}
