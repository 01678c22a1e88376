/**
 * The refresh code, loaded only when a refresh is due: the YAML parser and
 * the HTTP client are never read by a hook that does not refresh. The build
 * ships it as a bundle of its own beside the command bundles; the compiled
 * library and the sources load the module itself.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

type RefreshModule = typeof import('./refresh.js');

export const REFRESH_BUNDLE = 'brain-refresh.cjs';

export async function loadRefresh(): Promise<RefreshModule> {
  const here = import.meta.filename;
  // A command bundle lives in dist/bin/commands; the refresh bundle beside that folder.
  const bundled = join(dirname(here), '..', REFRESH_BUNDLE);
  if (existsSync(bundled)) return createRequire(here)(bundled) as RefreshModule;
  // Not bundled: a name the bundler cannot follow, so the hooks' bundles never take the module in.
  const module = ['./refresh', existsSync(join(dirname(here), 'refresh.ts')) ? '.ts' : '.js'].join('');
  return (await import(module)) as RefreshModule;
}
