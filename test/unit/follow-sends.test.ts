import assert from 'node:assert/strict';
import { test } from 'node:test';
import { advance, MAX_SKIPPED, SendsFollower, SKIPPED_WAIT_MS, type FollowState } from '../../src/core/follow-sends.js';
import type { PositionedMessage } from '../../src/store/ports.js';

function message(position: number): PositionedMessage {
  return {
    position,
    messageId: `m-${position}`,
    fromAgent: 'a',
    toAgent: 'b',
    body: `body ${position}`,
    threadId: 't',
    sentAt: '2026-12-01T00:00:00.000000Z',
    readAt: null,
    deliveredAt: null,
    addressedTo: 'b',
    fanoutId: null,
    toGroup: null,
    claimedBy: null,
    priority: null,
    deliveredVia: null,
    readVia: null,
    taskId: null,
    taskState: null,
  };
}

const start: FollowState = { position: 10, skipped: new Map() };
const ids = (rows: PositionedMessage[]): number[] => rows.map((row) => row.position);

test('rows past the position are handed on in order, and the position moves to the last', () => {
  const { state, fresh } = advance(start, [message(12), message(11), message(13)], 0);
  assert.deepEqual(ids(fresh), [11, 12, 13]);
  assert.equal(state.position, 13);
  assert.equal(state.skipped.size, 0);
});

test('a position jumped over is remembered, handed on once when it commits, and never again', () => {
  const first = advance(start, [message(11), message(13)], 0);
  assert.deepEqual(ids(first.fresh), [11, 13]);
  assert.deepEqual([...first.state.skipped.keys()], [12]);
  const late = advance(first.state, [message(12)], 1_000);
  assert.deepEqual(ids(late.fresh), [12], 'the late commit is handed on');
  assert.equal(late.state.skipped.size, 0);
  assert.deepEqual(ids(advance(late.state, [message(12), message(13)], 2_000).fresh), [], 'nothing is handed on twice');
});

test('a skipped position that never commits (a rolled-back send) is given up after a while', () => {
  const first = advance(start, [message(12)], 0);
  assert.deepEqual([...first.state.skipped.keys()], [11]);
  assert.equal(advance(first.state, [], SKIPPED_WAIT_MS - 1).state.skipped.size, 1);
  assert.equal(advance(first.state, [], SKIPPED_WAIT_MS + 1).state.skipped.size, 0);
});

test('a long run of skipped positions is remembered only up to its cap', () => {
  const { state, fresh } = advance(start, [message(10 + MAX_SKIPPED * 5)], 0);
  assert.equal(state.skipped.size, MAX_SKIPPED);
  assert.deepEqual(ids(fresh), [10 + MAX_SKIPPED * 5]);
});

test('the follower asks for what is past its position and for what it saw skipped, batch after batch', async () => {
  const stored = new Map<number, PositionedMessage>();
  for (let position = 1; position <= 1_200; position++) if (position !== 7) stored.set(position, message(position));
  const asked: Array<[number, number[]]> = [];
  const follower = new SendsFollower(
    async (after, also, limit) => {
      asked.push([after, also]);
      return [...stored.values()].filter((row) => row.position > after || also.includes(row.position)).sort((a, b) => a.position - b.position).slice(0, limit);
    },
    { position: 0, skipped: new Map() },
    () => 0,
  );
  const first = await follower.next();
  assert.equal(first.length, 1_199, 'every stored message, across batches');
  assert.ok(asked.length >= 3, 'more than one batch was read');
  assert.ok(!('position' in (first[0] as object)), 'handed on as plain messages');
  stored.set(7, message(7));
  const late = await follower.next();
  assert.deepEqual(late.map((row) => row.messageId), ['m-7']);
  assert.deepEqual(asked.at(-1)?.[1], [7], 'it asked for the skipped position');
  assert.deepEqual(await follower.next(), []);
});
