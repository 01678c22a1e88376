/**
 * Who else is chatting under the same name. Two chats as one name split the
 * mail between them (whichever reads first takes it), so the second one to
 * connect is told. Each chat leaves its pid in `chat-seats/` next to the
 * database while it runs.
 */
import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processRuns } from '../adapters/procs.js';

export interface Seat {
  /** Pids of other running chats under this name. */
  others: number[];
  release(): void;
}


export function takeSeat(folder: string, name: string): Seat {
  const seats = join(folder, 'chat-seats');
  const encoded = encodeURIComponent(name);
  const others: number[] = [];
  try {
    mkdirSync(seats, { recursive: true, mode: 0o700 });
    for (const file of readdirSync(seats)) {
      // `<name>.<pid>`: the name is everything before the last dot (names can hold dots).
      if (file.endsWith('.tmp') || file.slice(0, file.lastIndexOf('.')) !== encoded) continue;
      const pid = Number(readFileSync(join(seats, file), 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processRuns(pid)) others.push(pid);
      else if (pid !== process.pid) rmSync(join(seats, file), { force: true }); // Left by a chat that did not end cleanly.
    }
    const mine = join(seats, `${encoded}.${process.pid}`);
    writeFileSync(`${mine}.tmp`, `${process.pid}\n`, { mode: 0o600 });
    renameSync(`${mine}.tmp`, mine);
    return { others, release: () => rmSync(mine, { force: true }) };
  } catch {
    // Telling is a courtesy: a folder that cannot be written never stops the chat.
    return { others, release: () => undefined };
  }
}
