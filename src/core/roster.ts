/** How a name is filed on the roster: its repo and client columns, and the rows registered with it. */
import { clientAddressOf, parseNameLenient } from './names.js';
import type { Registration } from '../store/types.js';

/**
 * The registrations that put `name` on the roster. A session also registers
 * the client address its siblings share, first, so mail to that address has a holder.
 */
export function registrationsFor(name: string, repoPath: string, authoritative: boolean): Registration[] {
  const parsed = parseNameLenient(name);
  if (parsed === null || parsed.client === null) {
    return [{ name, repoPath, groupName: null, client: null, authoritative }];
  }
  if (parsed.handle === null) {
    return [{ name, repoPath, groupName: parsed.group, client: parsed.client, authoritative }];
  }
  const shared = clientAddressOf(name) as string;
  return [
    { name: shared, repoPath, groupName: parsed.group, client: parsed.client, authoritative },
    // Session rows keep `client` empty: older versions parse any name with a client strictly.
    { name, repoPath, groupName: parsed.group, client: null, authoritative },
  ];
}
