/** `agent-bus store copy FROM TO`: move a whole bus between engines (SQLite file ⇄ PostgreSQL URL). */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { copyBus } from '../../core/store-copy.js';
import { BusError } from '../../model/errors.js';
import { isPostgresUrl } from '../../model/locations.js';
import { openStoreAt } from '../../runtime.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { quoted } from '../../model/quote.js';

/** A database setting as given on the command line: a URL as it is, a file path resolved (~ expanded). */
function location(given: string, cwd: string, home: string): string {
  if (isPostgresUrl(given)) return given.trim();
  const path = given === '~' ? home : given.startsWith('~/') ? `${home}/${given.slice(2)}` : given;
  return resolve(cwd, path);
}

export const run: CommandRunner = async (args, io) => {
  const [action, from, to, ...rest] = args.positionals;
  if (action !== 'copy') throw new UsageError(`store: expected copy, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus store --help'.`);
  if (from === undefined || to === undefined) throw new UsageError("store copy: give FROM and TO (a SQLite file or a postgres:// URL). See 'agent-bus store --help'.");
  if (rest.length > 0) throw new UsageError(`store copy: unexpected argument ${quoted(rest[0])}`);
  const home = io.env.HOME || homedir();
  const source = location(from, io.cwd, home);
  const target = location(to, io.cwd, home);
  // Opening a SQLite file creates it: a mistyped FROM must not become an empty bus that copies nothing.
  if (!isPostgresUrl(source) && !existsSync(source)) throw new BusError(`store copy: there is no database at ${source}`);
  const fromStore = openStoreAt(source, io.env);
  const toStore = openStoreAt(target, io.env);
  try {
    const report = await copyBus(fromStore, toStore, (table, rows, done) => {
      if (!args.values.json && done) io.stdout.write(`  ${table.padEnd(24)}${rows} row${rows === 1 ? '' : 's'}\n`);
    });
    const total = report.tables.reduce((sum, table) => sum + table.rows, 0);
    if (args.values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    else io.stdout.write(`copied ${total} rows from ${report.from} to ${report.to}; every table's count matches\n`);
    return 0;
  } finally {
    await fromStore.close();
    await toStore.close();
  }
};
