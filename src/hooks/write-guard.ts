/**
 * What a file-writing tool call meets at the pre-tool hook: another agent's live reservation of the
 * file refuses it (AGENT_BUS_RESERVATIONS=deny, where the client can be refused) or warns the model
 * (warn, a shared reservation, or a client that cannot be refused); an allowed write is recorded, and
 * another agent's write of the same file within the collision window alerts both.
 */
import type { HookBus } from '../core/hook-bus.js';
import { BUS_NAME, repoOf } from '../core/names.js';
import type { HeldFile } from '../core/reservation-ops.js';
import { stampToMillis } from '../model/clock.js';
import type { ClientProfile } from '../clients/profile.js';
import type { PlannedWrites } from './planned-writes.js';
import { remainingText } from '../model/when.js';


export interface WriteCheck {
  /** The reason the call is refused, for the client to show the model; null when it goes ahead. */
  deny: string | null;
  /** What the model is told before the tool runs: reservations in the way, collisions. */
  context: string | null;
}

export interface WriteCall {
  profile: ClientProfile;
  writes: PlannedWrites;
  /** The agent the hook speaks for, and the session address it reads as when it must be told apart. */
  name: string;
  reader: () => Promise<string>;
}

function ago(fromStamp: string, nowMs: number): string {
  const seconds = Math.max(0, Math.round((nowMs - stampToMillis(fromStamp)) / 1000));
  return seconds < 120 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
}

/** A hold in one line: the file, who holds it, how long it still holds, why, and whether it is shared. */
export function holdLine(held: HeldFile, nowMs = Date.now()): string {
  return `${held.file} is reserved by ${held.holder} ${remainingText(held.until, nowMs)}${held.reason ? ` (${held.reason})` : ''}${held.mode === 'shared' ? ', shared' : ''}`;
}

export async function checkWrites(bus: HookBus, call: WriteCall): Promise<WriteCheck> {
  const { files, mode } = call.writes;
  const repo = repoOf(call.name);
  const { me, held } = await bus.reservations.heldAgainst(call.name, call.reader, repo, files);
  const refusing = held.filter((hold) => hold.mode === 'exclusive');
  const canRefuse = call.profile.dialect.denyTool !== undefined;
  if (mode === 'deny' && canRefuse && refusing.length > 0) {
    const first = refusing[0] as HeldFile;
    for (const hold of refusing) bus.reservations.noteDenied(me, repo, hold);
    return {
      deny: `[agent-bus] ${holdLine(first)}: this edit was refused and the file is untouched. Ask ${first.holder} with send_message to release it, or work on other files.`,
      context: null,
    };
  }
  const lines = held.map((hold) => `[agent-bus] ${holdLine(hold)}: coordinate with ${hold.holder} (send_message) before you change it.`);
  const nowMs = bus.clock.nowMicros() / 1000;
  for (const file of files) {
    for (const collision of await bus.reservations.recordWrite(me, repo, file)) {
      lines.push(`[agent-bus] ${collision.other} wrote ${file} ${ago(collision.otherAt, nowMs)}: you are both editing it; coordinate with send_message.`);
      await bus.mail
        // Urgent: the other agent may be mid-turn, editing the file right now.
        .send({ from: BUS_NAME, to: collision.other, urgent: true, body: `[agent-bus] ${me} is writing ${file} too (you wrote it ${ago(collision.otherAt, nowMs)}): you are both editing it; coordinate with send_message.` })
        .catch(() => undefined);
    }
  }
  return { deny: null, context: lines.length === 0 ? null : lines.join('\n') };
}
