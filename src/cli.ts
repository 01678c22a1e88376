#!/usr/bin/env node
import { main } from './cli/main.js';

// A reader that goes away early (`agent-bus tail | head`) is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

void main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
}).then((code) => {
  process.exitCode = code;
});

