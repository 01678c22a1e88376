/**
 * The commands the README and docs/ show are the CLI's: every `agent-bus COMMAND` in their code (blocks
 * and `spans`) names a command the built CLI has, and every `--option` written after it is one that
 * command's --help lists.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, runCli, tempBus } from '../helpers/bus-env.js';

/** Words that follow `agent-bus` in the pages' code as a name, not a command: what other tools print. */
const NOT_COMMANDS: Record<string, string> = {
  connected: "opencode's `mcp list` shows the server as `✓ agent-bus connected`",
};

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];

/** The code of a page: the lines of its fenced blocks and its inline spans. */
function code(text: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (fenced) found.push({ line: index + 1, text: line });
    else for (const span of line.matchAll(/`([^`]+)`/g)) found.push({ line: index + 1, text: span[1] as string });
  });
  return found;
}

/** Each `agent-bus COMMAND …` in a piece of code: the command and the options written after it, up to a pipe, `;`, `&&` or a comment. */
function invocations(text: string): Array<{ command: string; options: string[] }> {
  const flat = text.replace(/\\\|/g, '/');
  return [...flat.matchAll(/(?:^|[\s;&|($])agent-bus ([a-z][a-z-]*)(?=\s|$)([^|;&#)]*)/g)].map((match) => ({
    command: match[1] as string,
    options: [...(match[2] as string).replace(/'[^']*'|"[^"]*"/g, '').matchAll(/(?:^|[\s[])(--[a-z][a-z-]*)/g)].map((option) => option[1] as string),
  }));
}

test('every agent-bus command and option the README and docs/ show is one the CLI has', () => {
  const bus = tempBus();
  try {
    // The commands a person types (--help), and those the clients run (help hooks).
    const top = runCli(['--help'], { env: bus.env });
    const hooks = runCli(['help', 'hooks'], { env: bus.env });
    assert.equal(top.code, 0);
    assert.equal(hooks.code, 0);
    const commands = new Set([...`${top.stdout}${hooks.stdout}`.matchAll(/^ {2}([a-z][a-z-]*)\s/gm)].map((match) => match[1] as string));
    assert.ok(commands.has('send') && commands.size > 20, `the commands were read from --help: ${[...commands].join(' ')}`);
    const helps = new Map<string, string>();
    const help = (command: string): string => {
      if (!helps.has(command)) helps.set(command, runCli([command, '--help'], { env: bus.env }).stdout);
      return helps.get(command) as string;
    };
    const wrong: string[] = [];
    let seen = 0;
    for (const page of PAGES) {
      for (const { line, text } of code(readFileSync(join(ROOT, page), 'utf8'))) {
        for (const { command, options } of invocations(text)) {
          seen++;
          // `agent-bus help TOPIC` is the help itself.
          if (command === 'help' || Object.hasOwn(NOT_COMMANDS, command)) continue;
          if (!commands.has(command)) {
            wrong.push(`${page}:${line}: agent-bus ${command} (no such command)`);
            continue;
          }
          for (const option of options) if (!new RegExp(`(^|[\\s,])${option}\\b`, 'm').test(help(command))) wrong.push(`${page}:${line}: agent-bus ${command} ${option} (not an option of ${command})`);
        }
      }
    }
    assert.ok(seen > 100, `the pages' commands were found: ${seen}`);
    assert.deepEqual(wrong, []);
  } finally {
    bus.cleanup();
  }
});
