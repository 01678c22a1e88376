/** Bracketed paste: markers dropped, pasted line breaks kept as marks, typed keys untouched. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { NEWLINE_MARK, PasteGuard, TAB_MARK, restoreMarks } from '../../src/tui/paste.js';

async function through(chunks: Array<string | Buffer>): Promise<string> {
  const source = new PassThrough();
  const guard = new PasteGuard(source);
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  for (const chunk of chunks) source.write(chunk);
  source.end();
  await new Promise((resolve) => guard.on('end', resolve));
  return Buffer.concat(out).toString('utf8');
}

test('a paste loses its markers and its line breaks become marks; typed Enter stays Enter', async () => {
  assert.equal(await through(['typed\r', '\u001b[200~one\r\ntwo\rthree\nfour\u001b[201~', '\r']), `typed\rone${NEWLINE_MARK}two${NEWLINE_MARK}three${NEWLINE_MARK}four\r`);
});

test('markers and characters split across reads', async () => {
  const euro = Buffer.from('€');
  const pasted = await through(['\u001b[20', '0~a\nb\u001b', '[201', '~\r', euro.subarray(0, 1), euro.subarray(1)]);
  assert.equal(pasted, `a${NEWLINE_MARK}b\r€`);
});

test('a start marker split right after its ESC is still a paste', async () => {
  assert.equal(await through(['\u001b', '[200~a\nb\u001b[201~']), `a${NEWLINE_MARK}b`);
});

test('a lone Escape and other sequences pass straight through', async () => {
  assert.equal(await through(['\u001b', '[A', '\u001b[2~']), '\u001b[A\u001b[2~');
});

test('a lone Escape with nothing after it is let through after a moment', async () => {
  const source = new PassThrough();
  const guard = new PasteGuard(source);
  const out: string[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')));
  source.write('x\u001b');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.deepEqual(out, ['x', '\u001b']);
  guard.detach();
});

test('inside a paste, control characters are not keys: ^C, ^D, ^U and escape sequences are dropped, tabs marked', async () => {
  assert.equal(await through(['\u001b[200~a\u0003b\u0004c\u0015d\te\u001b[Af\u001b[201~']), `abcd${TAB_MARK}e[Af`);
});

test('the marks become line breaks and tabs again in the message', () => {
  assert.equal(restoreMarks(`a${NEWLINE_MARK}b${TAB_MARK}c${NEWLINE_MARK}`), 'a\nb\tc\n');
});
