/**
 * Ids as people see them: short, unique in practice, the same every time, and taken back as input
 * in either form. Pure, with no Node.js module: the dashboard's page shows ids this way too.
 *
 * The bus's ids are UUIDs. A time-ordered one (version 7: message and task ids) begins with its
 * time, so ids made together share their first characters; its last twelve hex digits are random,
 * and they are its short form. A random one (version 4: thread and fan-out ids) is its first twelve
 * hex digits, dash left out. An id that is no UUID (a thread named before ids were checked) is its
 * own short form, cut to twelve characters.
 */

/** The longest a short id is. */
export const SHORT_ID_LENGTH = 12;

/** The fewest characters taken as the start of an id: fewer match too much to be meant. */
export const MIN_ID_PREFIX = 4;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether an id is time-ordered (its short form is its random tail) rather than random. */
function timeOrdered(id: string): boolean {
  return UUID.exec(id)?.[1] === '7';
}

/** The short form of an id: at most twelve characters, unique in practice and always the same. */
export function shortId(id: string): string {
  if (!UUID.test(id)) return id.slice(0, SHORT_ID_LENGTH);
  return timeOrdered(id) ? id.slice(-SHORT_ID_LENGTH).toLowerCase() : id.replace(/-/g, '').slice(0, SHORT_ID_LENGTH).toLowerCase();
}

/**
 * Where the ids that `given` may name begin, for the store to look up by range: `prefixes` are
 * starts of whole ids (as typed, and hex digits with the dashes put back), `tail` a start of the
 * short form of time-ordered ids (the text after their last dash).
 */
export interface IdLookup {
  prefixes: string[];
  tail: string | null;
}

/** Where to look for the ids `given` may name (see IdLookup). */
export function idLookup(given: string): IdLookup {
  const text = given.trim();
  const prefixes = [text];
  const hex = /^[0-9a-f]+$/i.test(text) ? text.toLowerCase() : null;
  if (hex !== null && hex !== text) prefixes.push(hex);
  // Hex digits past the first eight: a whole id's start with its dashes put back.
  if (hex !== null && hex.length > 8) {
    const dashed = [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16), hex.slice(16, 20), hex.slice(20)].filter((part) => part !== '').join('-');
    prefixes.push(dashed);
  }
  return { prefixes: [...new Set(prefixes)], tail: hex !== null && hex.length <= SHORT_ID_LENGTH ? hex : null };
}

/** Whether `given` names `id`: the whole id, or the start of it (dashes or none), or of its short form. */
export function namesId(given: string, id: string): boolean {
  const text = given.trim().toLowerCase();
  if (text === '') return false;
  const whole = id.toLowerCase();
  if (whole === text) return true;
  if (text.length < MIN_ID_PREFIX) return false;
  return whole.startsWith(text) || whole.replace(/-/g, '').startsWith(text) || shortId(id).startsWith(text);
}
