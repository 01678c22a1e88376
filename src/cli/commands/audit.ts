/** `agent-bus audit verify`: the audit log's hash chain, and the log against the store. */
import { shownName } from '../../audit/files.js';
import type { ChainReport } from '../../audit/verify.js';
import { readLog, type StoreCheck } from '../../core/audit-check.js';
import { busPaths } from '../../adapters/paths.js';
import { quoted } from '../../model/quote.js';
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import { shortIdText } from '../../render/format.js';
import { when } from '../../model/when.js';
import type { CommandRunner } from '../spec.js';

/** How many of each kind of finding the text report lists before it counts the rest. */
const SHOWN = 10;

export const run: CommandRunner = async (args, io) => {
  const [action, ...rest] = args.positionals;
  if (action !== 'verify') throw new UsageError(`audit: expected verify, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus audit --help'.`);
  if (rest.length > 0) throw new UsageError(`audit verify: unexpected argument ${quoted(rest[0])}`);
  const path = busPaths(io.env).audit;
  const bus = openBus(io.env);
  try {
    const { chain, sendRows, prunedBefore } = readLog(path);
    const store = await bus.auditCheck.check(sendRows, prunedBefore);
    const repaired = args.values.repair ? bus.auditCheck.repair(store.missing) : 0;
    const chainOk = chain.problems.length === 0;
    const storeOk = (store.missing.length === 0 || repaired === store.missing.length) && store.unknown.length === 0;
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify(jsonReport(path, chain, store, repaired, chainOk && storeOk))}\n`);
    } else {
      io.stdout.write(textReport(path, chain, store, repaired));
    }
    return chainOk && storeOk ? 0 : 1;
  } finally {
    await bus.close();
  }
};

function jsonReport(path: string, chain: ChainReport, store: StoreCheck, repaired: number, ok: boolean): object {
  return {
    ok,
    log: path,
    files: chain.files,
    rows: chain.rows,
    legacy_rows: chain.legacyRows,
    starts_with: chain.startsWith,
    first_seq: chain.firstSeq,
    head: chain.head,
    problems: chain.problems,
    torn_lines: chain.torn,
    store: {
      messages: store.messages,
      missing_send_rows: store.missing.map((message) => ({ message_id: message.messageId, from: message.fromAgent, to: message.toAgent, sent_at: message.sentAt })),
      unknown_messages: store.unknown.map((row) => ({ message_id: row.messageId, file: row.file, line: row.line, ts: row.ts })),
      pruned_rows: store.pruned,
      in_flight: store.inFlight,
    },
    repaired,
  };
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

function textReport(path: string, chain: ChainReport, store: StoreCheck, repaired: number): string {
  const out: string[] = [];
  const rotated = chain.files.length - (chain.files.some((file) => file.path === path) ? 1 : 0);
  out.push(`audit log: ${path}${rotated > 0 ? ` and ${count(rotated, 'rotated file')}` : ''}, ${count(chain.rows, 'row')}`);
  if (chain.legacyRows > 0) out.push(`  ${count(chain.legacyRows, 'row')} from before the chain began: read, not checked`);
  if (chain.torn.length > 0) {
    const [first] = chain.torn;
    out.push(
      `  ${count(chain.torn.length, 'line')} cut short by a write its process did not live to finish (first ${shownName(first?.file ?? path, path)}:${first?.line ?? 0}); ` +
        'the chain goes on past each, and a send among their rows shows below as a message with no send row',
    );
  }
  if (chain.problems.length === 0) {
    if (chain.head === null) out.push('  chain: no chained rows yet');
    else out.push(`  chain: intact from ${chain.startsWith === 'continue' ? `seq ${chain.firstSeq} (older files are gone)` : 'its genesis'} to seq ${chain.head.seq}`);
  } else {
    const [first] = chain.problems;
    if (first !== undefined) out.push(`  chain: BROKEN at ${shownName(first.file, path)}:${first.line}: ${first.message}`);
    for (const problem of chain.problems.slice(1, SHOWN)) out.push(`    also ${shownName(problem.file, path)}:${problem.line}: ${problem.message}`);
    if (chain.problems.length > SHOWN) out.push(`    and ${count(chain.problems.length - SHOWN, 'more problem')}`);
  }
  out.push(`store: ${count(store.messages, 'message')}`);
  if (store.missing.length === 0) out.push('  every message has its send row');
  else {
    const fixed = repaired === store.missing.length;
    out.push(`  ${count(store.missing.length, 'message')} with no send row${fixed ? `: ${count(repaired, 'row')} appended, marked recovered` : " (a send stopped between storing and logging): 'agent-bus audit verify --repair' appends them"}`);
    for (const message of store.missing.slice(0, SHOWN)) out.push(`    ${shortIdText(message.messageId)}  ${when(message.sentAt)}  ${message.fromAgent} → ${message.toAgent}`);
    if (store.missing.length > SHOWN) out.push(`    and ${count(store.missing.length - SHOWN, 'more')}`);
  }
  if (store.unknown.length > 0) {
    out.push(`  ${count(store.unknown.length, 'send row')} naming a message the store does not have:`);
    for (const row of store.unknown.slice(0, SHOWN)) out.push(`    ${shownName(row.file, path)}:${row.line}  ${row.messageId}`);
    if (store.unknown.length > SHOWN) out.push(`    and ${count(store.unknown.length - SHOWN, 'more')}`);
  }
  if (store.pruned > 0) out.push(`  ${count(store.pruned, 'send row')} of mail prune removed`);
  if (store.inFlight > 0) out.push(`  ${count(store.inFlight, 'message')} sent in the last seconds: not judged`);
  return `${out.join('\n')}\n`;
}
