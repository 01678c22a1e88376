/**
 * Help a newcomer can read: the top list grouped by purpose in a fixed order, the clients' own
 * commands only under `help hooks`, no line wider than 100 columns, and every command's help ending
 * with one or two examples that the CLI itself accepts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import stringWidth from 'string-width';
import { parseCommandArgs } from '../../src/cli/args.js';
import { COMMANDS, findCommand } from '../../src/cli/commands.js';
import { runCli, withTempBus } from '../helpers/bus-env.js';

const GROUP_ORDER = ['Getting started', 'Mail', 'Coordination', 'The fleet', 'Channels and the brain', 'The hub', 'Maintenance'];
const INTERNAL = COMMANDS.filter((command) => command.group === 'hooks');

function assertNarrow(text: string, what: string): void {
  for (const line of text.split('\n')) assert.ok(stringWidth(line) <= 100, `${what}: a line of ${stringWidth(line)} columns: ${line}`);
}

/** The words of a shell command line, as the shell would pass them (variables left as they are written). */
function shellWords(line: string): string[] {
  const result = spawnSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/home/example' } });
  assert.equal(result.status, 0, `the shell reads ${line}: ${result.stderr}`);
  return result.stdout.split('\0').slice(0, -1);
}

test('the top help groups the commands by purpose, in order, and leaves the clients\' commands to help hooks', withTempBus((bus) => {
  const top = runCli(['--help'], { env: bus.env });
  assert.equal(top.code, 0);
  assertNarrow(top.stdout, '--help');
  const headings = top.stdout.split('\n').filter((line) => /^[A-Z].*:$/.test(line) && line !== 'Options:');
  assert.deepEqual(headings.map((heading) => GROUP_ORDER.find((group) => heading.startsWith(group))), GROUP_ORDER, `the groups in order: ${headings.join(' | ')}`);
  // Each group lists its commands beneath it, up to the next heading.
  const sections = top.stdout.split(/\n(?=[A-Z][^\n]*:\n)/);
  for (const command of COMMANDS) {
    const listed = sections.filter((section) => new RegExp(`\\n  ${command.name} +\\S`).test(section));
    if (INTERNAL.includes(command)) assert.equal(listed.length, 0, `${command.name} is not in the top list`);
    else assert.equal(listed.length, 1, `${command.name} is listed once`);
  }
  assert.match(top.stdout, /^Getting started:\n {2}demo .*\n {2}init /m, 'a newcomer starts with demo, then init');
  assert.match(top.stdout, /help hooks/);

  const hooks = runCli(['help', 'hooks'], { env: bus.env });
  assert.equal(hooks.code, 0);
  assertNarrow(hooks.stdout, 'help hooks');
  for (const command of INTERNAL) assert.match(hooks.stdout, new RegExp(`\\n  ${command.name} +\\S`), `help hooks lists ${command.name}`);
  assert.ok(INTERNAL.length >= 7, 'the hooks and the status line');
}));

test("every command's help fits 100 columns and ends with one or two examples the CLI accepts", withTempBus((bus) => {
  for (const command of COMMANDS) {
    const help = runCli(['help', command.name], { env: bus.env });
    assert.equal(help.code, 0, command.name);
    assertNarrow(help.stdout, `${command.name} --help`);
    const examples = /\nExamples:\n((?: {2}.*\n)+)$/.exec(help.stdout);
    assert.ok(examples, `${command.name}'s help ends with its examples`);
    const lines = (examples[1] as string).trimEnd().split('\n').map((line) => line.trim());
    assert.ok(lines.length >= 1 && lines.length <= 2, `${command.name}: one or two examples, not ${lines.length}`);
    for (const line of lines) {
      // The agent-bus part of a pipeline, its arguments as the shell passes them.
      const part = line.split(' | ').find((piece) => new RegExp(`(^|\\s)agent-bus ${command.name}( |$)`).test(piece));
      assert.ok(part, `${command.name}: ${line} runs agent-bus`);
      const words = shellWords(part.slice(part.indexOf('agent-bus ')));
      assert.equal(words[0], 'agent-bus');
      assert.equal(words[1], command.name, `${line} is an example of ${command.name}`);
      const spec = findCommand(command.name);
      assert.ok(spec);
      assert.doesNotThrow(() => parseCommandArgs(spec, words.slice(2)), `${line}: the CLI accepts it`);
    }
  }
}));

test('help for something that is not a command or topic exits 2 and names the nearest', withTempBus((bus) => {
  const result = runCli(['help', 'sendd'], { env: bus.env });
  assert.equal(result.code, 2);
  assert.equal(result.stdout, '');
  assert.match(result.stderr, /^agent-bus: help: no command or topic 'sendd'\. Did you mean 'send'\?\nUsage: agent-bus <command>/);
}));
