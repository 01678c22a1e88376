/**
 * `tail -f` on a machine set to use a hub: every send the hub's bus stores, from
 * any machine, as the hub's follow endpoint hands them on (held open until
 * there are some, pushed by its change feed). Positions the store skipped
 * are asked for again, as a local follower does.
 */
import type { AuditRow } from '../audit/record.js';
import { advance, type FollowState } from '../core/follow-sends.js';
import { HubUnreachable, refusal } from './http.js';
import { postToHub } from './calls.js';
import { HUB_PATHS, type FollowAnswer, type FollowRequest } from '../protocol/hub.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { BusError } from '../model/errors.js';

const WAIT_SECONDS = 25;
const RETRY_MS = 2_000;

async function ask(access: HubAccess, body: FollowRequest): Promise<FollowAnswer> {
  const reply = await postToHub(access, HUB_PATHS.follow, body, (WAIT_SECONDS + 15) * 1000);
  if (reply.status === 401) throw new BusError(`the hub at ${access.url} refused the token: ${refusal(reply.response)}`);
  if (reply.status !== 200) throw new HubUnreachable(refusal(reply.response));
  return reply.body as FollowAnswer;
}

export async function followOverHub(access: HubAccess, print: (row: AuditRow) => void, warn: (line: string) => void): Promise<number> {
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    // A wait in flight has nothing to finish: the hub lets go of it when the connection closes.
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let state: FollowState | null = null;
  let warned = false;
  while (!stopped) {
    try {
      if (state === null) state = { position: (await ask(access, {})).position, skipped: new Map() };
      const answer = await ask(access, { after: state.position, also: [...state.skipped.keys()], wait_seconds: WAIT_SECONDS });
      const moved: { state: FollowState; fresh: FollowAnswer['rows'] } = advance(state, answer.rows, Date.now());
      const { fresh } = moved;
      state = moved.state;
      for (const { row } of fresh) print(row);
      warned = false;
    } catch (error) {
      if (!(error instanceof HubUnreachable)) throw error;
      if (!warned) warn(`agent-bus: tail: cannot reach the hub at ${access.url} (${error.message}); trying again`);
      warned = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
  return 0;
}
