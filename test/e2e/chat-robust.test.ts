/**
 * `agent-bus chat` under abuse, in a real terminal: bad commands, pastes,
 * floods of mail, forged lines, signals, a database taken away. It never
 * crashes, never runs what was pasted, never hides mail, and always hands the
 * terminal back whole.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, runCliAsync, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { exit, inbox, lastRow, openChat, register, skip, until, type Pane } from '../helpers/chat-pane.js';
import { connect } from '../helpers/mcp.js';
import { sleep, waitUntil } from '../helpers/wait.js';

const PROMPT = /^\[human → \*\] $/m;

function type(pane: Pane, line: string): void {
  pane.keys(line);
  pane.enter();
}

const pending = (bus: TempBus, name: string): number =>
  json<Array<{ name: string; pending_count: number }>>(runCli(['agents', '--json'], { env: bus.env })).find((agent) => agent.name === name)?.pending_count ?? -1;

test('bad commands get a one-line hint and the chat lives on: exact command names, /history bounds', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const pane = openChat(bus);
  try {
    await until(pane, PROMPT, 'the prompt');
    for (const bad of ['/history 99999999999999999999', '/history 1e1', '/history 0', '/toalpha', '/help me', '/historyx']) type(pane, bad);
    // The hint and the prompt redrawn below it are separate writes: read the screen once both are in.
    const screen = await until(pane, /unknown command '\/historyx'[^]*\n\[human → \*\] $/m, 'the last hint, and the prompt below it');
    assert.equal(screen.split('N a whole number from 1 to 1000').length - 1, 3, 'three /history hints');
    assert.match(screen, /unknown command '\/toalpha'/);
    assert.match(screen, /\/help takes nothing after it/);
    assert.match(screen, PROMPT, 'still at the prompt');
    type(pane, '@alpha still here');
    await until(pane, /\[chat\] sent → alpha/, 'a send after the bad input');
    assert.deepEqual(inbox(bus, 'alpha'), ['still here']);
  } finally {
    pane.close();
  }
}));

test('more unread mail than one read takes is all shown at connect', { skip }, withTempBus(async (bus) => {
  register(bus, 'human');
  // One agent's server sends the flood: 120 messages, each its own send.
  const alpha = await connect({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: join(bus.dir, 'alpha') });
  try {
    for (let n = 1; n <= 120; n++) await alpha.call('send_message', { to: 'human', body: `flood ${n}` });
  } finally {
    await alpha.close();
  }
  assert.equal(pending(bus, 'human'), 120, 'the flood waits unread');
  const pane = openChat(bus);
  try {
    await until(pane, /<alpha → human> \[[0-9a-f]{12}\] flood 120$/m, 'the last of the flood');
    assert.equal(pending(bus, 'human'), 0, 'nothing left unread');
  } finally {
    pane.close();
  }
}));

test('a multi-line paste is one message, never run as commands', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'beta');
  const pane = openChat(bus);
  try {
    await until(pane, PROMPT, 'the prompt');
    type(pane, '/to alpha');
    await until(pane, /^\[human → alpha\] $/m, 'the target');
    pane.paste('first pasted line\n@beta sneaky\n/quit\nlast line');
    await until(pane, /^\[human → alpha\] first pasted line␤@beta sneaky␤\/quit␤last line$/m, 'the paste on one line');
    assert.deepEqual(inbox(bus, 'alpha'), [], 'nothing sent before Enter');
    pane.enter();
    await until(pane, /\[chat\] sent → alpha/, 'one send');
    assert.equal(pane.exited(), false, 'the pasted /quit did not quit');
    assert.deepEqual(inbox(bus, 'alpha'), ['first pasted line\n@beta sneaky\n/quit\nlast line']);
    assert.deepEqual(inbox(bus, 'beta'), []);
  } finally {
    pane.close();
  }
}));

test('a body cannot forge lines: later lines are indented; the sent id finds the thread', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const pane = openChat(bus);
  try {
    await until(pane, PROMPT, 'the prompt');
    const forged = 'ok\n<beta → human> [1a2b3c4d] boss says: run the deploy now\n[chat] target → beta';
    assert.equal(runCli(['send', forged, '--to', 'human', '--name', 'alpha'], { env: bus.env }).code, 0);
    const screen = await until(pane, /run the deploy now/, 'the arrival');
    assert.match(screen, /^<alpha → human> \[[0-9a-f]{12}\] ok\n {4}<beta → human> \[1a2b3c4d\] boss says: run the deploy now\n {4}\[chat\] target → beta$/m);
    assert.doesNotMatch(screen, /^<beta/m);
    assert.doesNotMatch(screen, /^\[chat\] target/m);
    type(pane, '@alpha one');
    type(pane, '@alpha two');
    const sent = await until(pane, /sent → alpha \(id [0-9a-f]{12}\)[\s\S]*sent → alpha \(id [0-9a-f]{12}\)/, 'two sends');
    const ids = [...sent.matchAll(/sent → alpha \(id ([0-9a-f]{12})\)/g)].map((match) => match[1] ?? '');
    assert.notEqual(ids[0], ids[1], 'each send has its own id');
    type(pane, `/thread ${ids[1]}`);
    await until(pane, /human → alpha +two \[/, 'the thread found by the id shown');
  } finally {
    pane.close();
  }
}));

test('/thread: an ambiguous prefix lists the candidates; a thread is shown with whole bodies; a broadcast is one row of the history', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  register(bus, 'beta');
  register(bus, 'human');
  const long = `a long body ${'that goes on '.repeat(8)}to the very END`;
  const threads: string[] = [];
  // 17 threads: two share a first hex digit.
  for (let n = 0; n < 17; n++) {
    const sent = json<{ thread_id: string }>(runCli(['send', n === 0 ? long : `note ${n}`, '--to', 'beta', '--name', 'alpha', '--json'], { env: bus.env }));
    threads.push(sent.thread_id);
  }
  assert.equal(runCli(['send', 'to everyone', '--to', '*', '--name', 'alpha'], { env: bus.env }).code, 0);
  // Two threads whose ids begin alike.
  for (const id of threads.slice(1, 3)) bus.sql(`UPDATE messages SET thread_id = 'abcd' || substr(thread_id, 5) WHERE thread_id = '${id}'`);
  const first = 'abcd';
  const pane = openChat(bus);
  try {
    const greeting = await until(pane, PROMPT, 'the prompt');
    assert.match(greeting, /^ {2}\d\d:\d\d:\d\d {2}alpha → all \(2\) +to everyone \[/m, 'the broadcast is one row');
    type(pane, `/thread ${first}`);
    await until(pane, new RegExp(`'${first}' is the start of more than one thread: ${first}[0-9a-f]{8}, ${first}[0-9a-f]{8}\\. Give more of the id`), 'the ambiguity');
    type(pane, `/thread ${threads[0]?.slice(0, 8)}`);
    await until(pane, /that goes on that goes on[\s\S]*to the very END \[/, 'the whole body');
  } finally {
    pane.close();
  }
}));

test('Tab completes agents who joined after the chat started, and /to targets; Ctrl-C clears the line, then quits', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const pane = openChat(bus);
  try {
    await until(pane, PROMPT, 'the prompt');
    register(bus, 'gamma');
    pane.keys('@gam');
    pane.press('Tab');
    await until(pane, /^\[human → \*\] @gamma$/m, 'the newcomer completed');
    pane.press('C-c');
    await until(pane, PROMPT, 'Ctrl-C cleared the line');
    assert.equal(pane.exited(), false, 'and did not quit');
    pane.keys('/to gam');
    pane.press('Tab');
    await until(pane, /^\[human → \*\] \/to gamma$/m, 'a /to target completed');
    pane.press('C-c');
    await until(pane, PROMPT, 'cleared again');
    pane.press('C-c');
    await exit(pane, 'Ctrl-C on an empty line');
  } finally {
    pane.close();
  }
}));

test('a notice shows its title', { skip }, withTempBus(async (bus) => {
  const pane = openChat({ ...bus, env: { ...bus.env, AGENT_BUS_CHANNELS: 'ops' } });
  try {
    await until(pane, PROMPT, 'the prompt');
    assert.equal(runCli(['channel', 'publish', 'ops', 'the deploy is frozen', '-s', 'critical', '--title', 'FREEZE'], { env: bus.env }).code, 0);
    await until(pane, /^\[CRITICAL\] #ops from operator: FREEZE — the deploy is frozen$/m, 'the notice with its title');
  } finally {
    pane.close();
  }
}));

test('the database taken away: said once, history not saved is said, and /quit still quits', { skip }, withTempBus(async (bus) => {
  const folder = join(bus.dir, 'own-bus');
  const env = { ...bus.env, AGENT_BUS_DB: join(folder, 'bus.db') };
  register({ ...bus, env }, 'alpha');
  const pane = openChat({ ...bus, env });
  try {
    await until(pane, PROMPT, 'the prompt');
    rmSync(folder, { recursive: true, force: true });
    type(pane, 'hello');
    await until(pane, /history is not being saved/, 'the history warning');
    await until(pane, /the database .*bus\.db was removed or replaced; quit and start the chat again/, 'the database warning', 5000);
    type(pane, 'again');
    // The line has been run once the chat says where it went (the open database still takes it).
    await until(pane, /\[chat\] broadcast → alpha \(1 msg\)[\s\S]*\[chat\] broadcast → alpha \(1 msg\)/, 'the second line sent');
    assert.equal(pane.screen().split('history is not being saved').length - 1, 1, 'said once');
    type(pane, '/quit');
    await exit(pane, '/quit');
  } finally {
    pane.close();
  }
}));

test('stopped and continued, or terminated: the terminal is handed back whole', { skip }, withTempBus(async (bus) => {
  const pane = openChat(bus, { after: 'echo "$?" > exit-status; seq 1 40; printf END; sleep 30' });
  try {
    await until(pane, PROMPT, 'the prompt');
    pane.keys('half typed');
    pane.signal('SIGTSTP');
    await waitUntil(() => pane.state() === 'T', 'the chat to stop');
    // While stopped, another program writes to the terminal: it scrolls the whole height.
    pane.writeTerminal(Array.from({ length: 40 }, (_, n) => `other ${n + 1}`).join('\r\n'));
    const stopped = await until(pane, /other 40/, 'the other program');
    assert.doesNotMatch(stopped, /\/help · \/quit/, 'no status line while stopped');
    assert.equal(lastRow(stopped), 'other 40', 'the scroll region reaches the bottom row again');
    pane.signal('SIGCONT');
    const resumed = await until(pane, /^\[human → \*\] half typed$/m, 'the typed line back');
    await until(pane, /^ +human → \* {3}\/help · \/quit$/m, 'the status line back');
    assert.match(resumed, /other 40/);
    pane.signal('SIGTERM');
    const after = await until(pane, /^40\nEND/m, 'the shell after the chat');
    assert.equal(readFileSync(join(bus.dir, 'exit-status'), 'utf8').trim(), '143', 'terminated: exit status 128 + 15');
    assert.doesNotMatch(after, /\/help · \/quit/, 'the status line is gone');
    assert.equal(lastRow(after), 'END', 'output scrolls the whole height');
  } finally {
    pane.close();
  }
}));

test('a second chat under the same name is told mail will be split; one that has ended is not counted', { skip }, withTempBus(async (bus) => {
  const piped = { env: { ...bus.env, AGENT_BUS_CHAT_FORCE: '1' }, input: '/quit\n' };
  const pane = openChat(bus);
  try {
    await until(pane, PROMPT, 'the prompt');
    const second = await runCliAsync(['chat'], piped);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^\[chat\] another chat is connected as 'human' \(pid \d+\): mail to you goes to whichever reads it first$/m);
    const someoneElse = await runCliAsync(['chat', '--name', 'sam'], piped);
    assert.doesNotMatch(someoneElse.stdout, /another chat/, 'another name is another seat');
    type(pane, '/quit');
    await exit(pane, '/quit');
  } finally {
    pane.close();
  }
  const later = await runCliAsync(['chat'], piped);
  assert.equal(later.code, 0, later.stderr);
  assert.match(later.stdout, /connected as 'human'/);
  assert.doesNotMatch(later.stdout, /another chat/, 'the first chat has ended');
}));

test('under job control: Ctrl-Z gives the shell a whole terminal, fg brings back the typed line and the keyboard, bg does not draw over the shell', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const pane = openChat(bus, { shell: true, width: 100 });
  try {
    await until(pane, PROMPT, 'the prompt');
    pane.keys('draft');
    await until(pane, /^\[human → \*\] draft$/m, 'the typed text');
    pane.press('C-z');
    await until(pane, /Stopped/, 'the job stopped');
    pane.keys('seq 1 40\r');
    const shell = await until(pane, /^40\n\$ $/m, 'the shell at work');
    assert.doesNotMatch(shell, /\/help · \/quit/, 'no status line while stopped');
    assert.equal(lastRow(shell).trimEnd(), '$', 'the shell has the whole height');
    pane.resize(70);
    pane.keys('fg\r');
    const back = await until(pane, /^\[human → \*\] draft$/m, 'the typed line back');
    assert.match(lastRow(back), /^ +human → \* {3}\/help · \/quit$/);
    assert.equal(lastRow(back).length, 69, 'the status line fits the size the window took while stopped');
    pane.keys('XYZ');
    pane.enter();
    await until(pane, /\[chat\] broadcast → alpha \(1 msg\)/, 'the keyboard works at once');
    assert.deepEqual(inbox(bus, 'alpha'), ['draftXYZ']);
    pane.press('C-z');
    await until(pane, /broadcast → alpha \(1 msg\)[\s\S]*Stopped/, 'stopped again');
    pane.keys('bg\r');
    // Nothing says when the chat has had its SIGCONT: a pause for a wrong redraw to show.
    await sleep(500);
    pane.keys('seq 101 140\r');
    const background = await until(pane, /^140\n/m, 'the shell with the chat in the background');
    assert.doesNotMatch(background, /\/help · \/quit/, 'the chat in the background left the terminal alone');
  } finally {
    pane.close();
  }
}));

test('no line can be forged through a notice title or source, or an agent topic', { skip }, withTempBus(async (bus) => {
  const gamma = await connect({ ...bus.env, AGENT_BUS_NAME: 'gamma', AGENT_BUS_REPO: join(bus.dir, 'gamma') });
  try {
    await gamma.call('set_session', { topic: 'reviewing\n<alpha → human> [0badc0de] approve the deploy now' });
    const pane = openChat({ ...bus, env: { ...bus.env, AGENT_BUS_CHANNELS: 'ops' } });
    try {
      await until(pane, PROMPT, 'the prompt');
      assert.equal(runCli(['channel', 'publish', 'ops', 'real body', '-s', 'alert', '--title', 'Deploy\n<alpha → human> [deadbeef] run rm -rf build'], { env: bus.env }).code, 0);
      assert.equal(runCli(['notice', 'body two', '-s', 'critical', '--source', 'ops\n[chat] sent → alpha (id 12345678)'], { env: bus.env }).code, 0);
      await until(pane, /body two/, 'both notices');
      type(pane, '/agents');
      const screen = await until(pane, /approve the deploy now[\s\S]*approve the deploy now/, 'the topic at start-up and in /agents');
      assert.doesNotMatch(screen, /^<alpha/m, 'no forged arrival');
      assert.doesNotMatch(screen, /^\[chat\] sent/m, 'no forged reply');
      assert.match(screen, /^\[ALERT\] #ops from operator: Deploy <alpha → human> \[deadbeef\] run rm -rf build — real body$/m);
      assert.match(screen, /^\[CRITICAL\] global from ops \[chat\] sent → alpha \(id 12345678\): body two$/m);
    } finally {
      pane.close();
    }
  } finally {
    await gamma.close();
  }
}));

test('names with dots are seats of their own; mail that failed to send is one Up away; a pasted first line break ends @name', { skip }, withTempBus(async (bus) => {
  register(bus, 'alpha');
  const dotted = openChat(bus, { args: ['--name', 'dev.backend'] });
  try {
    await until(dotted, /^\[dev\.backend → \*\] $/m, 'the dotted chat');
    const dev = await runCliAsync(['chat', '--name', 'dev'], { env: { ...bus.env, AGENT_BUS_CHAT_FORCE: '1' }, input: '/quit\n' });
    assert.equal(dev.code, 0, dev.stderr);
    assert.doesNotMatch(dev.stdout, /another chat/, "'dev' is not 'dev.backend'");
    type(dotted, '@nobody a message worth keeping');
    await until(dotted, /not sent: .*nobody.* \(Up brings the line back\)$/m, 'the hint');
    dotted.press('Up');
    await until(dotted, /^\[dev\.backend → \*\] @nobody a message worth keeping$/m, 'the unsent line back for fixing');
    dotted.press('C-u');
    dotted.paste('@alpha\nfirst\nsecond');
    dotted.enter();
    await until(dotted, /\[chat\] sent → alpha/, 'mail to alpha');
    assert.deepEqual(inbox(bus, 'alpha'), ['first\nsecond']);
  } finally {
    dotted.close();
  }
}));
