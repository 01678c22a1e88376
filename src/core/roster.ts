/** How a name is filed on the roster: its repo and client columns, and the rows registered with it. */
import { clientAddressOf, parseNameLenient } from './names.js';
import type { Registration } from '../store/ports.js';

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

/** Where a participant speaking from a shell (the CLI, the chat) says it is. */
export interface SpeakerPlace {
  /** The name is the shell's own identity ($AGENT_BUS_NAME, else human), not one borrowed with --name. */
  own: boolean;
  /** $AGENT_BUS_REPO, resolved, when the environment declares one. */
  declaredRepo: string | null;
  /** The folder the command runs in. */
  cwd: string;
  /** The speaker's home folder. */
  home: string;
}

/**
 * How a speaker is put on the roster when it sends or connects. Its own
 * identity's declared repo is authoritative (the row moves there). A name with
 * no client part is a person, and people have no repo: they are filed at home,
 * never at whatever folder they happened to type in. Anyone else is filed at
 * the folder it speaks from, and speaking as somebody else never moves them.
 */
export function speakerRegistrations(name: string, place: SpeakerPlace): Registration[] {
  if (place.own && place.declaredRepo !== null) return registrationsFor(name, place.declaredRepo, true);
  const person = parseNameLenient(name)?.client === null;
  if (person) return registrationsFor(name, place.home, place.own);
  return registrationsFor(name, place.cwd, false);
}
