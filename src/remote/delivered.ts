/**
 * The second half of a remote delivery: the hook or watcher printed the mail
 * the hub handed it, and tells the hub, which marks it read and delivered only
 * then; or it could not print it, and the hub gives it back (POST /v1/delivered).
 */
import { setting, type Env } from '../model/settings.js';
import { postToHub } from './calls.js';
import { HUB_PATHS, type DeliveredRequest } from '../protocol/hub.js';
import type { HubAccess } from '../adapters/hub-access.js';

/**
 * Tell the hub the mail it handed over is printed: only now is it read and delivered. A confirmation
 * that fails loses nothing: the mail's lease runs out and a later turn shows it again.
 */
export async function confirmDelivered(access: HubAccess, confirmation: DeliveredRequest, timeoutMs: number, run: { env: Env; warn(text: string): void }): Promise<void> {
  try {
    const response = await postToHub(access, HUB_PATHS.delivered, confirmation, timeoutMs);
    if (response.status !== 200 && setting(run.env, 'AGENT_BUS_DEBUG')) run.warn(`agent-bus hook: the hub answered ${response.status} to the delivery`);
  } catch (error) {
    if (setting(run.env, 'AGENT_BUS_DEBUG')) run.warn(`agent-bus hook: ${(error as Error).message}`);
  }
}
