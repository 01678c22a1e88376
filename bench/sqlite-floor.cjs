'use strict';
/**
 * The least a hook can cost as a process of its own: open the bus's SQLite file through the driver
 * the hooks use on this Node.js, loaded as they load it, set the connection up as the bus does, and
 * read a row of mail. None of the bus is loaded: on the built-in driver nothing of agent-bus at all;
 * on the addon, only the driver's bundle (better-sqlite3's JavaScript, with its V8 code cache, and the
 * compiled addon, dlopen'ed directly), as a hook loads it. The hook figures time this beside each
 * hook, so a figure shows how much of a hook's start is the runtime and SQLite, and how much the bus.
 *
 * node sqlite-floor.cjs builtin|better-sqlite3 DATABASE
 */
const [driver, path] = process.argv.slice(2);
// The connection's settings as src/store/sqlite/open.ts makes them.
const SETUP = 'PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 8000; PRAGMA cache_size = -16000; PRAGMA mmap_size = 268435456';

/** The addon driver's bundle, compiled from its code cache as the CLI's launcher compiles a bundle. */
function addonDriver() {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  const Module = process.getBuiltinModule('node:module');
  const { dirname, join } = process.getBuiltinModule('node:path');
  const { Script } = process.getBuiltinModule('node:vm');
  const bundle = join(dirname(process.argv[1]), '..', 'dist', 'bin', 'sqlite-addon.cjs');
  // The cache this Node.js's V8 recorded, named as src/adapters/bundles.ts names it.
  const cachedData = readFileSync(`${bundle}.${process.versions.v8}-${process.arch}.v8cache`);
  const script = new Script(Module.wrap(readFileSync(bundle).toString('utf8')), { filename: bundle, cachedData });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, Module.createRequire(bundle), module, bundle, dirname(bundle));
  return module.exports.addonDriver;
}

let db;
if (driver === 'builtin') {
  // Node.js 22 says the module is experimental; the hooks silence exactly that too.
  process.removeAllListeners('warning');
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
  db = new DatabaseSync(path, { timeout: 5000 });
} else if (driver === 'better-sqlite3') {
  db = addonDriver().open(path, { timeoutMs: 5000, readonly: false });
} else {
  process.stderr.write(`sqlite-floor: no driver ${JSON.stringify(driver)}\n`);
  process.exit(2);
}
db.prepare('PRAGMA user_version').get();
db.exec(SETUP);
db.exec('PRAGMA journal_mode = WAL');
db.prepare('SELECT message_id FROM messages ORDER BY message_id DESC LIMIT 1').get();
db.close();
