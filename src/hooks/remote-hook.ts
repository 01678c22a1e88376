/**
 * A hook on a machine without the database: one request to the hub, which
 * answers for the token's agent in the client's dialect. Whatever goes wrong
 * (the hub down, slow, refusing), the turn goes on: nothing is printed but the
 * dialect's "nothing", and the hook exits 0 within AGENT_BUS_HOOK_TIMEOUT_MS.
 */
import { printerFor } from '../clients/dialect.js';
import { nothingToAnswer, preToolPartOf, sessionFromEnvironment } from '../clients/profile.js';
import { profileFor } from '../clients/registry/profiles.js';
import { busDotEnv } from '../adapters/dot-env.js';
import { setting, type Env } from '../model/settings.js';
import { parseSubscriptions } from '../core/subscriptions.js';
import type { HookKind } from './run-kind.js';
import type { MidTurn } from '../model/hooks.js';
import { payloadDirectory, payloadSessionKey, payloadTimeoutMs, readPayload, type Payload } from './payload.js';
import { plannedWrites } from './planned-writes.js';
import { repoRoot } from '../adapters/identity.js';
import { postToHub } from '../remote/calls.js';
import { confirmDelivered } from '../remote/delivered.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { HUB_PATHS, type HookAnswer, type HookRequest } from '../protocol/hub.js';

export interface RemoteHookRun {
  kind: HookKind;
  client: string | null;
  /** `hook-stop --peek`: the hub takes and records nothing. */
  peek?: boolean;
  env: Env;
  /** Where the hook runs: the repo whose files a pre-tool call writes is found from the payload's folder, else here. */
  cwd: string;
  write(text: string): void;
  warn(text: string): void;
}

function nothingFor(kind: HookKind, client: string | null): string {
  return printerFor(profileFor(client).dialect, kind)(null);
}

export async function runRemoteHook(run: RemoteHookRun, access: HubAccess): Promise<number> {
  const payload = await readPayload(payloadTimeoutMs(run.env));
  // A send of the client's own (no prompt) asks the hub nothing.
  if (nothingToAnswer(profileFor(run.client), run.kind, payload)) {
    run.write(nothingFor(run.kind, run.client));
    return 0;
  }
  const request = await hookRequestOf(payload, run);
  const answered = await askHub(access, request, run);
  if (answered === null) {
    run.write(nothingFor(run.kind, run.client));
    return 0;
  }
  // Printed first, then confirmed; a client that is gone makes the print throw, and the mail is given back.
  try {
    run.write(answered.output);
  } catch (error) {
    await answered.confirm(false);
    throw error;
  }
  await answered.confirm(true);
  return 0;
}

/**
 * What the hub is asked, from the client's payload read on the agent's machine: one reading for a
 * hook's own process and for the session's relay answering the client's hook call (`json`).
 */
export async function hookRequestOf(payload: Payload, run: Omit<RemoteHookRun, 'write' | 'warn'> & { json?: boolean }): Promise<HookRequest> {
  const request: HookRequest = {
    kind: run.kind,
    client: run.client,
    session_key: payloadSessionKey(payload) ?? sessionFromEnvironment(profileFor(run.client), run.env),
    thread_id: payloadSessionKey(payload),
    // What this session subscribes to is this machine's setting: the hub has no way to know it.
    subscriptions: parseSubscriptions(run.env, () => busDotEnv(run.env)),
    ...(run.peek ? { peek: true } : {}),
    ...(run.json ? { json: true } : {}),
    ...(run.kind === 'pre-tool' ? { midturn: setting(run.env, 'AGENT_BUS_MIDTURN') as MidTurn } : {}),
    ...(run.kind === 'notification' && typeof payload.notification_type === 'string' ? { notification: payload.notification_type } : {}),
  };
  // Where the client sets no limit on the turns a stop hook starts, this machine's limit goes with the request.
  if (run.kind === 'stop' && profileFor(run.client).stopKeepsCounted) request.stop_keeps = setting(run.env, 'AGENT_BUS_STOP_KEEPS');
  if (run.kind === 'pre-tool') {
    const part = preToolPartOf(profileFor(run.client), payload);
    if (part !== 'both') request.pre_tool_part = part;
    // The payload's paths mean something on this machine only: the hub is told the repo's files.
    const folder = payloadDirectory(payload) ?? run.cwd;
    const writes = part === 'context' ? null : await plannedWrites(profileFor(run.client), payload, () => repoRoot(folder), folder, run.env);
    if (writes !== null) request.writes = writes;
  }
  return request;
}

/** The hub's answer, and how to confirm the mail it holds once the answer is shown (or not); null when no answer came. */
export async function askHub(
  access: HubAccess,
  request: HookRequest,
  run: { env: Env; warn(text: string): void },
): Promise<{ output: string; confirm(printed: boolean): Promise<void> } | null> {
  const timeoutMs = setting(run.env, 'AGENT_BUS_HOOK_TIMEOUT_MS');
  let answered: HookAnswer | null = null;
  try {
    const reply = await postToHub(access, HUB_PATHS.hook, request, timeoutMs);
    const body = reply.body as Partial<HookAnswer> | null;
    if (reply.status === 200 && body !== null && typeof body.output === 'string') answered = { output: body.output, delivery: body.delivery ?? null };
    else if (setting(run.env, 'AGENT_BUS_DEBUG')) run.warn(`agent-bus hook: the hub answered ${reply.status}`);
  } catch (error) {
    if (setting(run.env, 'AGENT_BUS_DEBUG')) run.warn(`agent-bus hook: ${(error as Error).message}`);
  }
  if (answered === null) return null;
  const { output, delivery } = answered;
  return {
    output,
    confirm: (printed) => (delivery === null ? Promise.resolve() : confirmDelivered(access, { delivery, session_key: request.session_key, printed }, timeoutMs, run)),
  };
}
