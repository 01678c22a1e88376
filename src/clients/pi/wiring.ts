/**
 * What `agent-bus init` writes for Pi: the extension `.pi/extensions/agent-bus.ts` (extension-file.ts),
 * which carries the subscriptions (kept across runs once the user edits them) and, for a hub, its
 * URL. It is committed: it runs the bare `agent-bus` and names no agent. Pi reads no personal file
 * in the repo.
 */
import { DEFAULT_SUBSCRIPTIONS } from '../../core/subscriptions.js';
import { readConfigText as readText } from '../config-files.js';
import { configPaths, noPersonalFileNote, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { EXTENSION_MARKER, extensionChannels, piExtensionSource } from './extension-file.js';
import { piProfile as profile } from './profile.js';

export const piWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    const [extensionPath] = this.files(repo) as [string];
    const extension = readText(extensionPath);
    if (extension.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${extensionPath}: ${extension.reason}, left alone` };
    if (extension.kind === 'missing') return { status: 'absent', previousName: null };
    return { status: extension.text.startsWith(EXTENSION_MARKER) ? 'managed' : 'handwritten', previousName: null };
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [extensionPath] = this.files(repo) as [string];
    const extension = readText(extensionPath);
    if (extension.kind === 'unreadable') throw new Error('a config file cannot be read');
    const before = extension.kind === 'ok' ? extension.text : null;
    const channels = (before === null ? null : extensionChannels(before)) ?? DEFAULT_SUBSCRIPTIONS;
    return {
      files: [{ path: extensionPath, before, after: piExtensionSource(launcher.command, channels, remote) }],
      notes: noPersonalFileNote(profile, launcher),
    };
  },
};
