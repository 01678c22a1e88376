/**
 * Follow the audit log as it grows (`tail -f`). File-system events on the
 * log's folder wake the reader at once; a slow poll covers file systems that
 * deliver no events. Truncation and rotation (a new file under the same name)
 * restart reading at the top of the new content.
 */
import { closeSync, fstatSync, openSync, readSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

const SIGNATURE_BYTES = 64;

export interface FollowOptions {
  /** Byte offset to start from; defaults to the current end of the file. */
  fromOffset?: number;
  /** Fallback poll interval in milliseconds. */
  pollMs?: number;
}

export interface Follower {
  /** Read what has been written since the last look, now. */
  flush(): void;
  close(): void;
}

export function followLines(path: string, onLine: (line: string) => void, options: FollowOptions = {}): Follower {
  let fd: number | null = null;
  let inode = -1;
  let offset = 0;
  let remainder = Buffer.alloc(0);
  // The last bytes read: if they change under us, the file was truncated and
  // rewritten to at least its old size between two looks.
  let signature = Buffer.alloc(0);
  let closed = false;

  const restart = (): void => {
    offset = 0;
    remainder = Buffer.alloc(0);
    signature = Buffer.alloc(0);
  };

  const rewritten = (): boolean => {
    if (signature.length === 0 || fd === null) return false;
    const now = Buffer.alloc(signature.length);
    const bytes = readSync(fd, now, 0, now.length, offset - signature.length);
    return bytes !== signature.length || !now.equals(signature);
  };

  const open = (): boolean => {
    try {
      fd = openSync(path, 'r');
      inode = fstatSync(fd).ino;
      return true;
    } catch {
      fd = null;
      return false;
    }
  };

  const drain = (): void => {
    if (closed) return;
    let current: { ino: number; size: number };
    try {
      current = statSync(path);
    } catch {
      return; // Not there (yet, or between rotation steps): wait for the next event.
    }
    if (fd === null || current.ino !== inode) {
      if (fd !== null) closeSync(fd);
      if (!open()) return;
      restart();
    }
    if (current.size < offset || rewritten()) restart();
    const chunk = Buffer.alloc(64 * 1024);
    for (;;) {
      const bytes = readSync(fd as number, chunk, 0, chunk.length, offset);
      if (bytes <= 0) break;
      offset += bytes;
      signature = Buffer.concat([signature, chunk.subarray(0, bytes)]);
      if (signature.length > SIGNATURE_BYTES) signature = Buffer.from(signature.subarray(signature.length - SIGNATURE_BYTES));
      let data = remainder.length > 0 ? Buffer.concat([remainder, chunk.subarray(0, bytes)]) : chunk.subarray(0, bytes);
      let newline = data.indexOf(0x0a);
      while (newline >= 0) {
        onLine(data.subarray(0, newline).toString('utf8'));
        // A handler may close the follower (its reader went away): what is left stays unread.
        if (closed) return;
        data = data.subarray(newline + 1);
        newline = data.indexOf(0x0a);
      }
      remainder = Buffer.from(data);
    }
  };

  if (open()) {
    offset = options.fromOffset ?? fstatSync(fd as unknown as number).size;
    const length = Math.min(SIGNATURE_BYTES, offset);
    signature = Buffer.alloc(length);
    if (readSync(fd as unknown as number, signature, 0, length, offset - length) !== length) signature = Buffer.alloc(0);
  }

  let watcher: FSWatcher | null = null;
  try {
    const name = basename(path);
    watcher = watch(dirname(path), { persistent: true }, (_event, changed) => {
      if (changed === null || changed === name) drain();
    });
    watcher.on('error', () => {
      watcher?.close();
      watcher = null;
    });
  } catch {
    watcher = null; // No events here: the poll below does the work.
  }
  const poll = setInterval(drain, options.pollMs ?? 1000);
  drain();

  return {
    flush: drain,
    close(): void {
      closed = true;
      clearInterval(poll);
      watcher?.close();
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}
