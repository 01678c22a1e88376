/** Wires the bus together from the environment: where the store and the audit log live. */
import { AuditLog } from './audit/log.js';
import { Bus } from './core/bus.js';
import { busPaths } from './core/paths.js';
import { busSettings, type Env } from './core/settings.js';
import { openStore } from './store/open.js';

export function openBus(env: Env = process.env): Bus {
  const paths = busPaths(env);
  return new Bus(openStore(paths.db), new AuditLog(paths.audit), busSettings(env));
}
