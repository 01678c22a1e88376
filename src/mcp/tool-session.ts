/**
 * What the tools need of the identity they speak as: over stdio a ServerSession
 * (a client's process, which may hold a session address), over the hub the
 * agent a request's token names.
 */
import type { ReceiptWay } from '../model/receipts.js';

export interface ToolSession {
  /** The name every call speaks as. */
  readonly name: string;
  /** The folder this identity works in, as the roster shows it. */
  readonly repoPath: string;
  /** Whether this identity holds a session address of its own (not a shared or bare name). */
  readonly holdsSession: boolean;
  /** How mail read_inbox takes reaches its reader: a model's call, or over the hub agent-bus's own chat or inbox. */
  readonly readWay: ReceiptWay;
  /** What whoami warns about. */
  readonly warnings: string[];
  /** Ready the identity before a call (register it, take its session address); `callKey` is the client's id for the conversation. */
  ensure(callKey: string | null): Promise<void>;
  /** Give the session address a label. */
  rename(label: string): Promise<void>;
  /** The client's id for the conversation making a call: whose notice receipts count. */
  clientSessionKey(callKey: string | null): string | null;
  /** A call found the store unusable, or (null) got through again. */
  noteStoreProblem(message: string | null): void;
}
