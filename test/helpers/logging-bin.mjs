#!/usr/bin/env node
// The real agent-bus, run through a wrapper that notes each run once it has ended (its
// arguments and exit code, in $LOGGING_BIN_LOG): a test then knows a hook ran, and is done.
import { spawnSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../dist/bin/cli.cjs', import.meta.url));
const args = process.argv.slice(2);
const run = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
appendFileSync(process.env.LOGGING_BIN_LOG, `${JSON.stringify({ args, code: run.status })}\n`);
process.exit(run.status ?? 1);
