/**
 * A spawned client's process: started in a process group of its own (a stop reaches the servers and
 * hooks it starts), with its output in its log, under a small POSIX shell that writes its exit status
 * to a private file when it ends. So whoever starts it (`spawn` itself, when a slot is free, to spare
 * the client a second Node.js start-up) need not be the one that watches it: the supervisor reads the
 * exit from the file, whichever process is the shell's parent.
 *
 * The shell's script is fixed; the executable, its arguments (the prompt among them) and the file are
 * its positional parameters, never part of the script, so nothing in them is read by a shell.
 */
import { spawn as startProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';

/**
 * $0 is the exit file, "$@" the client. The shell catches the polite signals (a caught signal is the
 * default again in the client it starts), so it outlives a stop's SIGTERM to write the client's status.
 */
const WRAPPER = 'trap : TERM INT HUP; "$@"; status=$?; umask 077; echo "$status" > "$0"';

export interface ClientStart {
  executable: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  folder: string;
  /** The descriptor of its log, for both of its output streams. */
  logFd: number;
  /** Where its exit status is written when it ends. */
  exitFile: string;
}

export interface StartedClient {
  /** The shell's pid, which is its process group's id. */
  pid: number;
  /** Its end as the shell's parent hears it (this process started it). */
  ended: Promise<void>;
}

/** Start the client; a failure to start at all (no shell) is thrown. */
export function startClient(start: ClientStart): Promise<StartedClient> {
  rmSync(start.exitFile, { force: true });
  const child = startProcess('/bin/sh', ['-c', WRAPPER, start.exitFile, start.executable, ...start.args], {
    cwd: start.folder,
    env: start.env,
    stdio: ['ignore', start.logFd, start.logFd],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      const ended = new Promise<void>((done) => child.once('exit', () => done()));
      // The supervisor may be another process: this one need not wait for it.
      child.unref();
      resolve({ pid: child.pid as number, ended });
    });
  });
}

/** Whether a process has ended: gone, or a zombie nobody has reaped yet (its parent may be long gone). */
export function processEnded(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
  try {
    // /proc/PID/stat: "pid (comm) STATE …"; the command may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/** Wait until the process ends, looking every `pollMs`; `stopWaiting` gives up early (false). */
export async function awaitEnd(pid: number, pollMs: number, stopWaiting: () => boolean = () => false): Promise<boolean> {
  while (!processEnded(pid)) {
    if (stopWaiting()) return false;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}

/**
 * How the client ended, from its exit file: its status as the shell saw it (a signal that ended it
 * reads as 128 and the signal's number, which a client may also exit with: the status is kept as it
 * is). No file: the shell itself was killed (a stop's SIGKILL), so the client's end is that signal's,
 * as far as anyone can tell.
 */
export function readExit(exitFile: string): { code: number | null; signal: NodeJS.Signals | null } {
  let text: string;
  try {
    text = readFileSync(exitFile, 'utf8').trim();
  } catch {
    return { code: null, signal: 'SIGKILL' };
  } finally {
    rmSync(exitFile, { force: true });
  }
  if (!/^\d+$/.test(text)) return { code: null, signal: 'SIGKILL' };
  return { code: Number(text), signal: null };
}

/** Signal the agent's whole process group (its servers and hooks with it), or the process alone where there is no group. */
export function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone already.
    }
  }
}
