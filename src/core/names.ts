/**
 * The naming rules of the bus: repo slugs, client ids, session handles, and
 * the four forms a name can take (bare, client address, session address, `*`).
 */
import { InvalidNameError } from '../model/errors.js';
import { quoted } from '../model/quote.js';

export const MAX_SLUG_LENGTH = 40;
export const MAX_CLIENT_LENGTH = 12;
export const MAX_LABEL_LENGTH = 24;
export const MAX_SESSION_NUMBER = 99;
/** Longest name the rules allow: slug + "/" + client + "-" + label. */
export const MAX_NAME_LENGTH = MAX_SLUG_LENGTH + 1 + MAX_CLIENT_LENGTH + 1 + MAX_LABEL_LENGTH;
export const BROADCAST = '*';

const CLIENT_RE = /^[a-z][a-z0-9]{0,11}$/;
const NUMBER_RE = /^[1-9][0-9]?$/;
const LABEL_RE = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
// Bare names come from humans and older versions; refuse only what would break
// addressing or display: separators, whitespace, control characters.
// eslint-disable-next-line no-control-regex
const BARE_FORBIDDEN_RE = /[\s\u0000-\u001f\u007f/*]/;

export interface ParsedName {
  /** The whole name as given. */
  name: string;
  /** The repo (or the bare name itself). */
  repo: string;
  /** The client id, when the name has a client part. */
  client: string | null;
  /** The session handle (number or label), when the name is a session address. */
  handle: string | null;
}

export function slugify(text: string): string {
  let slug = text
    .toLowerCase()
    .replace(/[_.]/g, '-')
    .replace(/\s+/g, '-')
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (slug === '') slug = 'repo';
  return slug.slice(0, MAX_SLUG_LENGTH).replace(/-+$/, '') || 'repo';
}

/** Why a client id is invalid, or null when it is valid. */
export function clientIdProblem(client: string): string | null {
  if (client === '') return 'a client id cannot be empty';
  if (client.length > MAX_CLIENT_LENGTH) return `a client id is at most ${MAX_CLIENT_LENGTH} characters (${quoted(client)} has ${client.length})`;
  if (!CLIENT_RE.test(client)) return `a client id is lowercase letters and digits starting with a letter (${quoted(client)} is not)`;
  return null;
}

/** Why a session handle is invalid, or null when it is valid. */
export function handleProblem(handle: string): string | null {
  if (handle === '') return 'a session handle cannot be empty';
  if (/^[0-9]+$/.test(handle)) {
    return NUMBER_RE.test(handle) ? null : `a session number is 1 to ${MAX_SESSION_NUMBER} without leading zeros (${quoted(handle)} is not)`;
  }
  if (handle.length > MAX_LABEL_LENGTH) return `a session label is at most ${MAX_LABEL_LENGTH} characters (${quoted(handle)} has ${handle.length})`;
  if (!LABEL_RE.test(handle)) {
    return `a session label is lowercase letters, digits and single dashes, starting with a letter (${quoted(handle)} is not)`;
  }
  return null;
}

function bareProblem(name: string): string | null {
  if (name === '') return 'a name cannot be empty';
  if (name === BROADCAST) return `'*' addresses everyone and cannot be an agent's name`;
  if (BARE_FORBIDDEN_RE.test(name)) return `a name cannot contain whitespace, control characters, '/' or '*' (${quoted(name)})`;
  if (name.length > MAX_NAME_LENGTH) return `a name is at most ${MAX_NAME_LENGTH} characters`;
  return null;
}

/** Why `name` breaks the naming rules, or null when it is a valid agent name. */
export function nameProblem(name: string): string | null {
  const slash = name.indexOf('/');
  if (slash < 0) return bareProblem(name);
  const repo = name.slice(0, slash);
  const rest = name.slice(slash + 1);
  if (repo === '') return `${quoted(name)} has no repo before the '/'`;
  const repoIssue = bareProblem(repo);
  if (repoIssue) return `the repo part of ${quoted(name)} is invalid: ${repoIssue}`;
  if (rest === '') return `${quoted(name)} has no client after the '/'`;
  if (rest.includes('/')) return `${quoted(name)} has more than one '/': a name is <repo>/<client>[-<session>]`;
  const dash = rest.indexOf('-');
  const client = dash < 0 ? rest : rest.slice(0, dash);
  const clientIssue = clientIdProblem(client);
  if (clientIssue) return `${quoted(name)}: ${clientIssue}`;
  if (dash >= 0) {
    const handleIssue = handleProblem(rest.slice(dash + 1));
    if (handleIssue) return `${quoted(name)}: ${handleIssue}`;
  }
  return null;
}

/** Parse a name, returning null for anything the rules reject (names read back from a database). */
export function parseNameLenient(name: string): ParsedName | null {
  if (nameProblem(name) !== null) return null;
  const slash = name.indexOf('/');
  if (slash < 0) return { name, repo: name, client: null, handle: null };
  const rest = name.slice(slash + 1);
  const dash = rest.indexOf('-');
  return {
    name,
    repo: name.slice(0, slash),
    client: dash < 0 ? rest : rest.slice(0, dash),
    handle: dash < 0 ? null : rest.slice(dash + 1),
  };
}

/** The bus's own name: what it tells agents itself (a collision alert) comes from it, and no one else speaks as it. */
export const BUS_NAME = 'agent-bus';

/** The person at this machine's CLI, when it names nobody else (--name, AGENT_BUS_NAME). */
export const HUMAN = 'human';

/** Why an agent or a person may not speak as `name` (a broken rule, or the bus's own name), or null. */
export function speakerProblem(name: string): string | null {
  return nameProblem(name) ?? (name === BUS_NAME ? `${quoted(BUS_NAME)} is the bus's own name (what it tells agents itself comes from it): pick another` : null);
}

/** Check a name someone is to speak as, throwing an error that names the broken rule. */
export function parseSpeaker(name: string): ParsedName {
  const problem = speakerProblem(name);
  if (problem !== null) throw new InvalidNameError(`invalid name: ${problem}`);
  return parseNameLenient(name) as ParsedName;
}

/** Parse a name, throwing an error that names the broken rule. */
export function parseName(name: string): ParsedName {
  const problem = nameProblem(name);
  if (problem !== null) throw new InvalidNameError(`invalid name: ${problem}`);
  return parseNameLenient(name) as ParsedName;
}

/** The repo a name belongs to: the part before '/', or the whole bare name. */
export function repoOf(name: string): string {
  const slash = name.indexOf('/');
  return slash < 0 ? name : name.slice(0, slash);
}

/** The client address a session or client name shares with its siblings, or null for a bare name. */
export function clientAddressOf(name: string): string | null {
  const parsed = parseNameLenient(name);
  if (!parsed || parsed.client === null) return null;
  return `${parsed.repo}/${parsed.client}`;
}

export function isSessionName(name: string): boolean {
  const parsed = parseNameLenient(name);
  return parsed !== null && parsed.handle !== null;
}

export function composeName(repo: string, client?: string | null, handle?: string | number | null): string {
  if (repo === '' || repo.includes('/')) throw new InvalidNameError(`invalid repo ${quoted(repo)}: it must be non-empty and contain no '/'`);
  if (client == null) return repo;
  const clientIssue = clientIdProblem(client);
  if (clientIssue) throw new InvalidNameError(`invalid client id: ${clientIssue}`);
  if (handle == null) return `${repo}/${client}`;
  const handleText = String(handle);
  const handleIssue = handleProblem(handleText);
  if (handleIssue) throw new InvalidNameError(`invalid session handle: ${handleIssue}`);
  return `${repo}/${client}-${handleText}`;
}

/** Turn free text into a session label (`Release Notes` → `release-notes`), or throw. */
export function normaliseLabel(text: string): string {
  const label = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_LABEL_LENGTH)
    .replace(/-+$/, '');
  if (label === '' || !/^[a-z]/.test(label)) {
    throw new InvalidNameError(`invalid session label ${quoted(text)}: a label must start with a letter and contain letters, digits or dashes`);
  }
  return label;
}
