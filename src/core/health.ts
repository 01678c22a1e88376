/** Whether the store answers, where it is, and how it stands: for a health check and `doctor`. */
import type { FollowPort, MaintenancePort, StoreIntegrity } from '../store/ports.js';

export class Health {
  constructor(
    private readonly store: MaintenancePort & Pick<FollowPort, 'lastPosition'>,
    /** Where the store lives, as shown to a user (a file's path, a URL without its password). */
    readonly location: string,
  ) {}

  /** A cheap read: it throws when the store does not answer. */
  async ping(): Promise<void> {
    await this.store.lastPosition();
  }

  /** The store's engine, schema version and a quick integrity check. */
  integrity(): Promise<StoreIntegrity> {
    return this.store.integrity();
  }
}
