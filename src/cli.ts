/**
 * The `agent-bus` launcher: picks the bundle for the command line (each
 * command ships as one bundle with the dispatcher inside) and runs it. Bundled as dist/bin/launcher.cjs,
 * which the file node runs (launch.ts, dist/bin/cli.cjs) loads with its code cache.
 */
import { bundleFor, keepCodeCache, loadCommandBundle, writeCodeCache } from './cli/command-loader.js';
import { fdOutput, isReaderGone } from './cli/output.js';
import { hubSet } from './adapters/hub-set.js';
import { setting } from './model/settings.js';

const loaded = loadCommandBundle(bundleFor(process.argv[2], () => hubSet(process.env)));
void loaded.bundle
  .start({
    argv: process.argv.slice(2),
    env: process.env,
    cwd: process.cwd(),
    stdout: fdOutput(1, () => process.stdout),
    stderr: fdOutput(2, () => process.stderr),
    stdin: () => process.stdin,
  })
  .then(
    (code) => {
      process.exitCode = code;
      // Set by the build only, which runs each command once to record its code cache.
      if (setting(process.env, 'AGENT_BUS_BUILD_CODE_CACHE') === '1') writeCodeCache(loaded);
      // A Node.js the build did not record a cache for records its own, once, after a run that went well.
      else if (code === 0) keepCodeCache(loaded);
    },
    (error: unknown) => {
      // A reader that goes away early (`agent-bus tail | head`) is not an error.
      if (isReaderGone(error)) process.exit(0);
      throw error;
    },
  );
