/** Finding a client's executable as the system would start it, so a spawn that cannot start says so at once. */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/** The file `command` starts: itself when it names a path, else the first executable file of that name on PATH; null when none. */
export function findExecutable(command: string, path: string | undefined, cwd: string): string | null {
  const runnable = (file: string): boolean => {
    try {
      if (!statSync(file).isFile()) return false;
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const file = isAbsolute(command) ? command : resolve(cwd, command);
    return runnable(file) ? file : null;
  }
  for (const folder of (path ?? '').split(delimiter)) {
    if (folder === '') continue;
    const file = join(folder, command);
    if (runnable(file)) return file;
  }
  return null;
}
