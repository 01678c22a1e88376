/** The brain's tools: brain_refresh and brain_status. */
import { brainSettings } from '../brain/settings.js';
import { brainStatus } from '../brain/status.js';
import { refreshBrain } from '../brain/refresh.js';
import { profileFor } from '../clients/registry/profiles.js';
import { sessionSubscriptionSource } from '../clients/subscription-source.js';
import { parseNameLenient } from '../core/names.js';
import type { ToolKit } from './tool-kit.js';

export function brainTools(kit: ToolKit): void {
  const { bus, session, tool } = kit;
  tool(
    'brain_refresh',
    { description: "Read the brain's source now and reconcile it into the brain channel (unchanged entries keep their ids; an unavailable source keeps the last good content).", inputSchema: {} },
    async () => {
      const settings = brainSettings(kit.env);
      return { channel: settings.channel, ...(await refreshBrain(bus, settings)) };
    },
  );
  tool(
    'brain_status',
    { description: "The brain's source, entry and live notice counts, content hash, refresh cadence, last fetch and warnings.", inputSchema: {} },
    // A client's settings files (Claude Code's) say what its sessions subscribe to. Other clients give the
    // repo's default to their hooks alone, so their servers know a launch value or the user's default, and else nothing.
    async () => {
      const client = profileFor(parseNameLenient(session.name)?.client);
      const source = sessionSubscriptionSource(kit.env, client, session.repoPath);
      return brainStatus(bus, brainSettings(kit.env), source.layer === 'none' && client.settings === null ? null : source);
    },
  );
}
