/** What the reservation tests share: a reservation as the CLI and the tools print it, and a repo to hold files in. */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { TempBus } from './bus-env.js';

export interface Reservation {
  id: string;
  repo: string;
  holder: string;
  path: string;
  mode: string;
  since: string;
  until: string;
  reason: string | null;
}

/** A git work tree named `shop` inside the bus's temp HOME. */
export function repoIn(bus: TempBus): string {
  const root = join(bus.env.HOME as string, 'shop');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'src'), { recursive: true });
  return realpathSync(root);
}
