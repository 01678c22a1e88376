/**
 * Whether a process still runs, judged on evidence only: when the process
 * table cannot tell (another user's process, no permission), it counts as alive.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
