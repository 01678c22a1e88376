/**
 * Installing as a user would, in a temp HOME: a PATH on which no native addon can be built (what a
 * machine without a compiler looks like to npm), and this machine's npm settings that a temp HOME hides.
 */
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync, symlinkSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { delimiter, join } from 'node:path';

/** What builds a native addon: compilers, make, Python (node-gyp's first need), the compiler cache. */
const BUILD_TOOLS = /^(cc|c\+\+|cpp|gcc|g\+\+|clang.*|make|gmake|cmake|python.*|ccache|.*-(gcc|g\+\+|cc|c\+\+)(-[\d.]+)?|node)$/;

/**
 * A folder of links to every program on PATH but the build tools (and node, which the caller puts
 * first): a machine with no compiler, as far as npm and node-gyp can tell.
 */
export function pathWithoutCompilers(folder: string): string {
  mkdirSync(folder, { recursive: true });
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (BUILD_TOOLS.test(name) || existsSync(join(folder, name))) continue;
      try {
        if (!statSync(join(dir, name)).isFile()) continue;
        symlinkSync(realpathSync(join(dir, name)), join(folder, name));
      } catch {
        // A dangling link, or a name already taken: skipped.
      }
    }
  }
  return folder;
}

/**
 * How this machine's npm is set up (where it caches packages, where Node's headers are): a user's
 * own npm configuration, which the temp HOME would hide. `npm test` hands it down as npm_config_*;
 * run otherwise, it is read (never written) from the user's npm configuration.
 */
export function machineNpmSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  const realHome = userInfo().homedir;
  for (const key of ['cache', 'nodedir', 'cafile', 'registry']) {
    const value = process.env[`npm_config_${key}`] ?? spawnSync('npm', ['config', 'get', key], { encoding: 'utf8', env: { ...process.env, HOME: realHome } }).stdout.trim();
    if (value !== '' && value !== 'undefined' && value !== 'null') settings[`npm_config_${key}`] = value;
  }
  return settings;
}

