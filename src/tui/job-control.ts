/**
 * Ctrl-Z, `fg` and `bg` for a full-screen-ish program. Stopping hands the
 * terminal back whole before the process stops; continuing takes it again
 * only when the chat is the terminal's foreground job, since after `bg` the
 * terminal belongs to the shell.
 */
import { readFileSync } from 'node:fs';
import type { Interface } from 'node:readline';

export interface JobHooks {
  /** Give the terminal back (just before the process stops). */
  release(): void;
  /** Take it again (continued in the foreground). */
  retake(): void;
}

/** Whether this process is its terminal's foreground job. Linux tells through /proc; elsewhere assume so. */
export function inForeground(): boolean {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command name: state ppid pgrp session tty_nr tpgid …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]) === Number(fields[5]);
  } catch {
    return true;
  }
}

export interface JobControl {
  /** Stopped, or continued in the background: the terminal is not ours to write. */
  readonly away: boolean;
  dispose(): void;
}

/** How often a chat running in the background looks whether `fg` has brought it forward. */
const FOREGROUND_LOOK_MS = 200;

export function controlJob(rl: Interface, hooks: JobHooks): JobControl {
  let away = false;
  let looking: NodeJS.Timeout | null = null;
  const stopLooking = (): void => {
    if (looking) clearInterval(looking);
    looking = null;
  };
  const stop = (): void => {
    stopLooking();
    if (!away) {
      away = true;
      hooks.release();
    }
    // SIGSTOP cannot be caught: the shell sees the job stopped, as with a plain Ctrl-Z.
    process.kill(process.pid, 'SIGSTOP');
  };
  const comeBack = (): boolean => {
    if (!away || !inForeground()) return false;
    stopLooking();
    away = false;
    hooks.retake();
    return true;
  };
  const carryOn = (): void => {
    // Continued in the background (`bg`): a later `fg` of a running job sends no signal, so look.
    if (!comeBack() && away && looking === null) looking = setInterval(comeBack, FOREGROUND_LOOK_MS);
  };
  // With a listener, readline leaves Ctrl-Z to us (its own handling pauses the input on continuing).
  rl.on('SIGTSTP', stop);
  process.on('SIGTSTP', stop);
  process.on('SIGCONT', carryOn);
  return {
    get away() {
      return away;
    },
    dispose: () => {
      stopLooking();
      rl.removeListener('SIGTSTP', stop);
      process.removeListener('SIGTSTP', stop);
      process.removeListener('SIGCONT', carryOn);
    },
  };
}
