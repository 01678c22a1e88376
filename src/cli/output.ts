/**
 * Output straight to a file descriptor. Touching process.stdout or
 * process.stdin builds Node's stream machinery (some twenty internal modules),
 * which a short command that prints one line has no use for.
 */
import { fstatSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface Output {
  write(text: string): void;
  readonly isTTY: boolean;
  /** Terminal width, when the output is a terminal. */
  readonly columns: number | undefined;
}

/** The reader went away (`agent-bus tail | head`): stop quietly, as other tools do. */
export class ReaderGone extends Error {
  constructor(message: string) {
    super(message);
    // The launcher makes the output, a command's bundle meets the error: each has its own copy of this class.
    this.name = 'ReaderGone';
  }
}

/** Whether an error says the reader went away, from any bundle's copy of ReaderGone. */
export function isReaderGone(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReaderGone';
}

/**
 * Whether `fd` is a terminal. Only a character device can be one; pipes and
 * files are answered without loading node:tty (which pulls in node:net).
 */
function isTerminal(fd: number): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  const tty = createRequire(import.meta.filename)('node:tty') as typeof import('node:tty');
  return tty.isatty(fd);
}

function sleepBriefly(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
}

export function fdOutput(fd: number, stream: () => { columns?: number }): Output {
  let tty: boolean | undefined;
  return {
    get isTTY() {
      tty ??= isTerminal(fd);
      return tty;
    },
    get columns() {
      return this.isTTY ? stream().columns : undefined;
    },
    write(text: string): void {
      const data = Buffer.from(text, 'utf8');
      let offset = 0;
      while (offset < data.length) {
        try {
          offset += writeSync(fd, data, offset, data.length - offset);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          // A non-blocking pipe that is full: wait for the reader rather than drop output.
          if (code === 'EAGAIN') sleepBriefly();
          else if (code === 'EPIPE') throw new ReaderGone('output closed');
          else throw error;
        }
      }
    },
  };
}
