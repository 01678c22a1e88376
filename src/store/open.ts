/** Choose and open the storage backend for a database location. */
import { SqliteStore } from './sqlite/store.js';
import type { Store } from './ports.js';

export function openStore(location: string): Store {
  return new SqliteStore(location);
}
