#!/usr/bin/env node
// A stand-in agent-bus for the opencode plugin tests: answers each hook from a
// script file, in order, optionally after a delay, and logs every call.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

const [subcommand, ...args] = process.argv.slice(2);
const script = JSON.parse(readFileSync(process.env.FAKE_SCRIPT, 'utf8'));
const counter = `${process.env.FAKE_SCRIPT}.${subcommand}.count`;
const index = existsSync(counter) ? Number(readFileSync(counter, 'utf8')) : 0;
writeFileSync(counter, String(index + 1));
appendFileSync(process.env.FAKE_LOG, `${JSON.stringify({ subcommand, args, name: process.env.AGENT_BUS_NAME, channels: process.env.AGENT_BUS_CHANNELS, defaultChannels: process.env.AGENT_BUS_DEFAULT_CHANNELS, watchClientPid: process.env.AGENT_BUS_WATCH_CLIENT_PID, cwd: process.cwd() })}\n`);
const replies = script[subcommand] ?? [];
const reply = replies[Math.min(index, replies.length - 1)] ?? '';
const delay = script.delayMs?.[subcommand] ?? 0;
setTimeout(() => {
  process.stdout.write(reply);
  if (script.stderr?.[subcommand]) process.stderr.write(script.stderr[subcommand]);
  process.exitCode = script.exit?.[subcommand] ?? 0;
}, delay);
