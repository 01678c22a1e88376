import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCommandArgs, UsageError } from '../../src/cli/args.js';
import { commandHelp } from '../../src/cli/help.js';
import { findCommand } from '../../src/cli/commands.js';
import type { CommandSpec } from '../../src/cli/spec.js';

function spec(name: string): CommandSpec {
  const found = findCommand(name);
  assert.ok(found, name);
  return found;
}

test('long options with a separate or attached value, booleans and positionals', () => {
  const parsed = parseCommandArgs(spec('send'), ['hello there', '--to', 'repo-a', '--thread=t-1', '--json']);
  assert.deepEqual(parsed.positionals, ['hello there']);
  assert.deepEqual(parsed.values, { to: 'repo-a', thread: 't-1', json: true });
  assert.deepEqual(parseCommandArgs(spec('send'), ['--to', 'x', '-']).positionals, ['-'], 'a lone - is the body from stdin');
  assert.deepEqual(parseCommandArgs(spec('send'), ['--', '--not-an-option']).positionals, ['--not-an-option']);
  assert.equal(parseCommandArgs(spec('send'), ['x', '--to=']).values.to, '', 'an explicit empty value is kept for the command to judge');
  assert.equal(parseCommandArgs(spec('send'), ['x', '--to', 'a', '--to', 'b']).values.to, 'b', 'the last one wins');
});

test('negative numbers and text with spaces are values, not options', () => {
  assert.deepEqual(parseCommandArgs(spec('send'), ['-5 degrees', '--to', 'x']).positionals, ['-5 degrees']);
  assert.deepEqual(parseCommandArgs(spec('send'), ['--to', 'x', '-5']).positionals, ['-5']);
  assert.deepEqual(parseCommandArgs(spec('send'), ['-a dash and a space', '--to', 'x']).positionals, ['-a dash and a space']);
  assert.equal(parseCommandArgs(spec('inbox'), ['--limit', '-1']).values.limit, '-1', 'for the command to refuse with its own words');
});

test('short flags', () => {
  assert.deepEqual(parseCommandArgs(spec('tail'), ['-f', '--limit', '3']).values, { follow: true, limit: '3' });
  assert.equal(parseCommandArgs(spec('inbox'), ['-h']).values.help, true);
});

test('mistakes are usage errors that say what is wrong', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['send', ['x', '--bogus'], /unknown option '--bogus'/],
    ['tail', ['-z'], /unknown option '-z'/],
    ['send', ['x', '--to'], /option '--to' needs a value \(NAME\)/],
    ['send', ['x', '--to', '--json'], /option '--to' needs a value/],
    ['send', ['x', '--json=yes'], /option '--json' takes no value/],
    ['send', [], /missing BODY/],
    ['send', ['a', 'b'], /unexpected argument 'b' \(quote BODY if it has spaces\)/],
    ['agents', ['extra'], /unexpected argument 'extra'\./],
  ];
  for (const [name, argv, message] of cases) {
    assert.throws(
      () => parseCommandArgs(spec(name), argv),
      (error: unknown) => error instanceof UsageError && error.exitCode === 2 && message.test(error.message) && error.message.includes(`agent-bus ${name} --help`),
      `${name} ${argv.join(' ')}`,
    );
  }
});

test('--help wins over missing arguments, and help lists every option', () => {
  assert.equal(parseCommandArgs(spec('send'), ['--help']).values.help, true);
  const help = commandHelp(spec('send'));
  assert.match(help, /^Usage: agent-bus send \[options\] BODY\n/);
  for (const option of ['--to NAME', '--thread ID', '--name NAME', '--json', '-h, --help']) assert.ok(help.includes(option), option);
  assert.match(help, /\(default: \*\)/);
});
