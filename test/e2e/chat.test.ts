/**
 * `agent-bus chat` driven for real in tmux (send-keys, capture-pane): mail
 * arriving never clobbers the line being typed; commands do what they say;
 * history survives a restart; a narrow terminal and a resize keep working.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { stripVTControlCharacters } from 'node:util';
import { json, runCli, withTempBus } from '../helpers/bus-env.js';
import { exit, inbox, lastRow, openChat, register, skip, until } from '../helpers/chat-pane.js';
import { connect } from '../helpers/mcp.js';

test('mail arriving while half a line is typed leaves the typed text intact', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const pane = openChat(bus);
  try {
    await until(pane, /^\[human → \*\] $/m, 'the prompt');
    pane.keys('hello wor');
    await until(pane, /\[human → \*\] hello wor$/m, 'the typed text');
    assert.equal(runCli(['send', 'ARRIVAL-WHILE-TYPING', '--to', 'human', '--name', 'alpha'], { env: bus.env }).code, 0);
    await until(pane, /<alpha → human> \[[0-9a-f]{12}\] ARRIVAL-WHILE-TYPING/, 'the arrival');
    // The arrival and the redraw below it are separate writes: read the screen once the redraw is in.
    const screen = await until(pane, /ARRIVAL-WHILE-TYPING[^]*\n\[human → \*\] hello wor\n/, 'the typed line redrawn below the arrival');
    const lines = screen.split('\n').filter((line) => line.trim() !== '');
    assert.match(lines.at(-2) ?? '', /^\[human → \*\] hello wor$/, 'the half-typed line is redrawn below, intact');
    assert.match(lines.at(-1) ?? '', /^ {40,}human → \* {3}\/help · \/quit$/, 'the status line stays at the bottom');
    assert.equal(lastRow(screen), lines.at(-1), 'on the last row of the terminal');
    pane.keys('ld');
    pane.enter();
    await until(pane, /\[chat\] broadcast → alpha \(1 msg\)/, 'the send feedback');
    assert.deepEqual(inbox(bus, 'alpha'), ['hello world']);
  } finally {
    pane.close();
  }
}));

test("a sent message's ticks follow it as they change: sent ✓, delivered ✓✓ when a model is shown it, read", { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'shop/claude');
  const pane = openChat(bus);
  const model = await connect({ ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop' });
  try {
    await until(pane, /^\[human → \*\] $/m, 'the prompt');
    pane.keys('@shop/claude TICK-ME');
    pane.enter();
    const sent = await until(pane, /^\[chat\] sent → shop\/claude \(id ([0-9a-f]{12})\) ✓$/m, 'the send, ticked once');
    const thread = /sent → shop\/claude \(id ([0-9a-f]{12})\)/.exec(sent)?.[1] ?? '';
    // The model peeks at its inbox: the mail is in its context, not yet taken.
    await model.call('read_inbox', { mark_read: false });
    await until(pane, new RegExp(`^\\[chat\\] ✓✓ delivered → shop/claude \\(id ${thread}\\)$`, 'm'), 'delivered, as it happened');
    await model.call('read_inbox', {});
    const screen = await until(pane, new RegExp(`^\\[chat\\] ✓✓ read → shop/claude \\(id ${thread}\\)$`, 'm'), 'read');
    assert.equal(screen.match(/✓✓ delivered → shop\/claude/g)?.length, 1, 'each move said once');
    // Each send is followed on its own.
    pane.keys('@alpha and @shop');
    pane.enter();
    await until(pane, /\[chat\] sent → alpha \(id [0-9a-f]{12}\) ✓/, 'a second send');
    inbox(bus, 'alpha');
    await until(pane, /^\[chat\] ✓✓ read → alpha \(id [0-9a-f]{12}\)$/m, 'read by alpha');
  } finally {
    await model.close();
    pane.close();
  }
}));

test('commands: @name, /to, plain text, bad input hints and sends nothing', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'beta');
  const pane = openChat(bus);
  try {
    await until(pane, /^\[human → \*\] $/m, 'the prompt');
    pane.keys('@alpha just you');
    pane.enter();
    await until(pane, /\[chat\] sent → alpha \(id [0-9a-f]{12}\)/, 'a direct send');
    pane.keys('/to beta');
    pane.enter();
    const retargeted = await until(pane, /^\[human → beta\] $/m, 'the new target');
    assert.match(lastRow(retargeted), /^ +human → beta {3}\/help · \/quit$/, 'the status line follows the target');
    pane.keys('plain text to beta');
    pane.enter();
    await until(pane, /\[chat\] sent → beta/, 'plain text to the target');
    for (const bad of ['/bogus', '@nobody hello', '@alpha', '/to nobody']) {
      pane.keys(bad);
      pane.enter();
    }
    const screen = await until(pane, /no agent 'nobody' on the bus/, 'the last hint');
    assert.match(screen, /unknown command '\/bogus'/);
    assert.match(screen, /not sent: .*nobody/);
    assert.match(screen, /nothing to send: the message is empty/);
    pane.keys('/agents');
    pane.enter();
    await until(pane, /beta +repo=/, 'the roster');
    pane.keys('/clear');
    pane.enter();
    // Cleared: the prompt is the screen's first line (it was a line of the screen before /clear too).
    const cleared = await until(pane, /^\[human → beta\] *\n/, 'the prompt at the top after /clear');
    assert.doesNotMatch(cleared, /plain text to beta|beta +repo=/, '/clear cleared the screen');
    assert.match(lastRow(cleared), /human → beta {3}\/help · \/quit$/, 'but not the status line');
    assert.deepEqual(inbox(bus, 'alpha'), ['just you'], 'bad input sent nothing');
    assert.deepEqual(inbox(bus, 'beta'), ['plain text to beta']);
    pane.keys('/quit');
    pane.enter();
    await exit(pane, '/quit');
    assert.doesNotMatch(pane.screen(), /\/help · \/quit/, 'the status line is erased on the way out');
  } finally {
    pane.close();
  }
}));

test('history survives a restart; a narrow terminal and a resize keep the typed line', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const first = openChat(bus);
  try {
    await until(first, /^\[human → \*\] $/m, 'the prompt');
    first.keys('/history 5');
    first.enter();
    await until(first, /alpha → alpha +joining/, 'the history of sends');
    first.keys('/quit');
    first.enter();
    await exit(first, '/quit'); // The history is written by then.
  } finally {
    first.close();
  }
  const second = openChat(bus, { width: 40 });
  try {
    await until(second, /^\[human → \*\] $/m, 'the prompt again');
    second.keys('\u001b[A'); // Up: the previous session's last line.
    await until(second, /^\[human → \*\] \/quit$/m, 'history from the last session');
    second.keys('\u001b[A');
    await until(second, /^\[human → \*\] \/history 5$/m, 'and the one before');
    // Clear the recalled line, type a long one in 40 columns, get mail, widen the window.
    second.keys('\u0015'); // Ctrl-U
    second.keys('a fairly long line that wraps past forty columns');
    assert.equal(runCli(['send', 'NARROW-ARRIVAL', '--to', 'human', '--name', 'alpha'], { env: bus.env }).code, 0);
    const narrow = await until(second, /NARROW-ARRIVAL\n\[human → \*\] a fairly long line that wraps past forty columns\n/, 'the arrival above the wrapped line');
    assert.equal(narrow.split('a fairly long').length - 1, 1, 'the wrapped line is redrawn whole, once, with no rows of it left behind');
    assert.match(lastRow(narrow), /^ +human → \* {3}\/help · \/quit$/);
    assert.equal(lastRow(narrow).length, 39, 'the status line fits 40 columns');
    second.resize(120);
    // The status line and readline's redraw of the typed line are two writes: wait for the screen that has both.
    const typedLine = /^\[human → \*\] a fairly long line that wraps past forty columns$/m;
    const wideStatus = /^ {80,}human → \* {3}\/help · \/quit$/m;
    const wide = await until(second, new RegExp(`(?=[\\s\\S]*${typedLine.source})(?=[\\s\\S]*${wideStatus.source})`, 'm'), 'the status line across the wider window, and the typed line after the resize');
    assert.equal(lastRow(wide).length, 119, 'right-aligned to the new width');
    assert.match(wide, typedLine, 'the typed line survives the resize');
    second.enter();
    await until(second, /\[chat\] broadcast → alpha/, 'the long line sent');
    assert.deepEqual(inbox(bus, 'alpha'), ['a fairly long line that wraps past forty columns']);
  } finally {
    second.close();
  }
}));

test('live critical and alert notices appear once, marked; info ones and other channels do not; Tab completes; /thread reprints', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'alphabet');
  const pane = openChat({ ...bus, env: { ...bus.env, AGENT_BUS_CHANNELS: 'deploy' } });
  try {
    await until(pane, /^\[human → \*\] $/m, 'the prompt');
    for (const args of [
      ['channel', 'publish', 'deploy', 'FREEZE-CRITICAL', '-s', 'critical'],
      ['channel', 'publish', 'deploy', 'HEADS-UP-ALERT', '-s', 'alert'],
      ['channel', 'publish', 'deploy', 'QUIET-INFO', '-s', 'info'],
      ['channel', 'publish', 'ops', 'OTHER-CHANNEL', '-s', 'critical'],
    ]) {
      assert.equal(runCli(args, { env: bus.env }).code, 0);
    }
    await until(pane, /\[ALERT\] #deploy from operator: HEADS-UP-ALERT/, 'the alert');
    // More traffic: each notice still shows once.
    runCli(['send', 'some mail', '--to', 'human', '--name', 'alpha'], { env: bus.env });
    const screen = await until(pane, /some mail/, 'later mail');
    assert.equal(screen.split('FREEZE-CRITICAL').length - 1, 1, 'the critical notice once');
    assert.match(screen, /\[CRITICAL\] #deploy from operator: FREEZE-CRITICAL/);
    assert.doesNotMatch(screen, /QUIET-INFO|OTHER-CHANNEL/);
    // Tab completes commands and agent names.
    pane.keys('/ag');
    pane.keys('\t');
    await until(pane, /^\[human → \*\] \/agents$/m, 'the completed command');
    pane.keys('\u0015@alphab');
    pane.keys('\t');
    await until(pane, /^\[human → \*\] @alphabet$/m, 'the completed name');
    pane.keys(' to the alphabet');
    pane.enter();
    await until(pane, /\[chat\] sent → alphabet/, 'the send');
    const thread = json<Array<{ thread_id: string }>>(runCli(['inbox', '--name', 'alphabet', '--json'], { env: bus.env }))[0]?.thread_id ?? '';
    pane.keys(`/thread ${thread.slice(0, 8)}`);
    pane.enter();
    await until(pane, /human → alphabet +to the alphabet/, 'the thread reprinted');
  } finally {
    pane.close();
  }
}));

/** The colour each agent keeps: its name's SHA-1 picks one of these SGR foreground codes. */
const PALETTE = [36, 32, 33, 34, 35, 31, 96, 92, 93, 94, 95, 91];
const coloured = (name: string): string => `\u001b[${PALETTE[createHash('sha1').update(name).digest().readUInt32BE(0) % PALETTE.length]}m${name}\u001b[39m`;

test('with colour on, each agent keeps one colour everywhere and the status line still fits', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  assert.notEqual(coloured('alpha').slice(0, 5), coloured('human').slice(0, 5), 'the two names differ in colour, so a swap would show');
  const pane = openChat({ ...bus, env: { ...bus.env, NO_COLOR: undefined } }, { width: 80 });
  try {
    await until(pane, /^\[human → \*\] $/m, 'the prompt');
    assert.equal(runCli(['send', 'IN-COLOUR', '--to', 'human', '--name', 'alpha'], { env: bus.env }).code, 0);
    await until(pane, /IN-COLOUR/, 'the arrival');
    const screen = pane.screen(true);
    assert.match(screen, new RegExp(`^${escapeRegExp(coloured('alpha'))} +repo=`, 'm'), 'the roster');
    assert.match(screen, new RegExp(`^${escapeRegExp(coloured('human'))} +repo=`, 'm'));
    assert.ok(screen.includes(`${coloured('alpha')} → ${coloured('alpha')}  joining`), 'the recent activity');
    assert.ok(screen.includes(`<${coloured('alpha')} → ${coloured('human')}>`), 'the arrival');
    assert.match(stripVTControlCharacters(lastRow(screen)), /^ +human → \* {3}\/help · \/quit$/);
    assert.equal(stripVTControlCharacters(lastRow(screen)).length, 79, 'colour codes do not count towards the width');
  } finally {
    pane.close();
  }
}));

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test('the name comes from --name, else AGENT_BUS_NAME; the greeting shows the roster and the last 10 sends; /help, /to all, /exit', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'beta');
  for (let n = 1; n <= 10; n++) assert.equal(runCli(['send', `note ${n}`, '--to', 'beta', '--name', 'alpha'], { env: bus.env }).code, 0);
  const named = { ...bus, env: { ...bus.env, AGENT_BUS_NAME: 'alex' } };
  const pane = openChat(named);
  try {
    const screen = await until(pane, /^\[alex → \*\] $/m, 'the prompt');
    assert.match(screen, /^agent-bus chat — connected as 'alex' \(default → \*\)\. \/help for commands\.$/m);
    assert.match(screen, /^agents on the bus \(3\):$/m);
    assert.match(screen, /^alex +repo=\S+ +seen just now \(you\) +pending=0$/m, 'the roster marks who you are');
    assert.match(screen, /^alpha +repo=/m);
    assert.match(screen, /^recent activity \(last 10 sends\):$/m);
    for (let n = 1; n <= 10; n++) assert.match(screen, new RegExp(`^  \\d\\d:\\d\\d:\\d\\d  alpha → beta  note ${n} \\[[0-9a-f]{12}\\]$`, 'm'), `send ${n}, local time and a 12-character thread`);
    assert.doesNotMatch(screen, /joining/, 'only the last 10 sends');
    pane.keys('/help');
    pane.enter();
    await until(pane, /\/thread <id> +reprint a thread/, 'the help');
    pane.keys('/to beta');
    pane.enter();
    await until(pane, /^\[alex → beta\] $/m, 'a single target');
    pane.keys('/to all');
    pane.enter();
    await until(pane, /^\[alex → \*\] $/m, '/to all is everyone');
    pane.keys('to both of you');
    pane.enter();
    await until(pane, /^\[chat\] broadcast → alpha, beta \(2 msg\) ✓$/m, 'the broadcast feedback');
    assert.deepEqual(inbox(bus, 'alpha'), ['to both of you']);
    pane.keys('/exit');
    pane.enter();
    await exit(pane, '/exit');
  } finally {
    pane.close();
  }
  const flagged = openChat(named, { args: ['--name', 'sam'] });
  try {
    await until(flagged, /connected as 'sam'/, '--name over AGENT_BUS_NAME');
    await until(flagged, /^ +sam → \* {3}\/help · \/quit$/m, 'the status line with that name');
  } finally {
    flagged.close();
  }
}));
