#!/usr/bin/env node
import { main } from './cli/main.js';
import { fdOutput, ReaderGone } from './cli/output.js';

void main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: fdOutput(1, () => process.stdout),
  stderr: fdOutput(2, () => process.stderr),
  stdin: () => process.stdin,
}).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A reader that goes away early (`agent-bus tail | head`) is not an error.
    if (error instanceof ReaderGone) process.exit(0);
    throw error;
  },
);
