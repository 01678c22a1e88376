/**
 * `agent-bus init`: which repos to wire, under which names, and what would
 * change in each client's files. Planning writes nothing.
 */
import type { HooksChoice } from '../clients/hook-entries.js';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { wiringFor } from '../clients/registry/wirings.js';
import { canonicalPath, gitRoot, IGNORE_FILE, NAME_FILE, repoName } from '../adapters/identity.js';
import { composeName, slugify } from '../core/names.js';
import type { ClientWiring, FileChange, Launcher } from '../clients/wiring.js';
import { quoted } from '../model/quote.js';

export type ClientAction = 'write' | 'refresh' | 'skip-handwritten' | 'skip-unreadable';
export type RepoAction = ClientAction | 'skip-ignored' | 'skip-not-repo';

export interface ClientPlan {
  client: string;
  name: string | null;
  action: ClientAction;
  previous_name: string | null;
  files: FileChange[];
}

export interface RepoPlan {
  repo: string;
  name: string | null;
  action: RepoAction;
  previous_name: string | null;
  notes: string[];
  clients: ClientPlan[];
  /**
   * The repo's name pinned in its committed .agent-bus-name, where the name init gives it (--name,
   * --prefix, a rename to tell two repos apart) is not the folder's: every session finds it there.
   */
  pin: FileChange | null;
}

export interface PlanOptions {
  paths: string[];
  clients: string[];
  scan: boolean;
  force: boolean;
  prefix: string;
  name?: string | undefined;
  /** How the files written start agent-bus. */
  launcher: Launcher;
  /** The hub's URL (init --remote), or null to wire this machine's own bus. */
  remote?: string | null;
  /** The kind of hook to write where a client has a choice (init --hooks); auto unless said. */
  hooks?: HooksChoice;
}

const SKIPPED_FOLDERS = new Set(['node_modules', '.venv', 'venv', '__pycache__', '.tox', '.mypy_cache', '.pytest_cache', '.ruff_cache', 'vendor', 'build', 'dist', '.next', '.nuxt']);
const MAX_SCAN_DEPTH = 6;

function isRepo(path: string): boolean {
  return existsSync(join(path, '.git'));
}

/** The pin file's change that makes the repo's name `name` wherever it is cloned; null when its folder (or its pin) names it so already. */
function pinChange(repo: string, name: string): FileChange | null {
  if (repoName(repo) === name) return null;
  const path = join(repo, NAME_FILE);
  let before: string | null = null;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    // No pin yet.
  }
  return { path, before, after: `${name}\n` };
}

/** Git repos under `root` (the root itself when it is one); nested repos and symlinks are not followed. */
export function scanRepos(root: string): string[] {
  const found: string[] = [];
  const walk = (folder: string, depth: number): void => {
    if (isRepo(folder)) {
      found.push(folder);
      return;
    }
    if (depth >= MAX_SCAN_DEPTH) return;
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith('.') || SKIPPED_FOLDERS.has(entry.name)) continue;
      const path = join(folder, entry.name);
      if (lstatSync(path).isSymbolicLink()) continue;
      walk(path, depth + 1);
    }
  };
  walk(canonicalPath(root), 0);
  return found.sort();
}

function repoNameFor(repo: string, options: PlanOptions): string {
  if (options.name) return slugify(options.name);
  const base = repoName(repo);
  if (options.prefix === '' || existsSync(join(repo, '.agent-bus-name'))) return base;
  return slugify(`${options.prefix.replace(/-+$/, '')}-${base}`);
}

function changed(files: FileChange[]): boolean {
  return files.some((file) => file.before !== file.after);
}

export function planRepo(repo: string, options: PlanOptions): RepoPlan {
  const base: RepoPlan = { repo, name: null, action: 'skip-not-repo', previous_name: null, notes: [], clients: [], pin: null };
  if (!isRepo(repo)) return base;
  if (existsSync(join(repo, IGNORE_FILE))) return { ...base, action: 'skip-ignored' };
  const group = repoNameFor(repo, options);
  const plan: RepoPlan = { ...base, name: group, action: 'skip-handwritten', pin: pinChange(repo, group) };
  for (const client of options.clients) {
    const wiring = wiringFor(client) as ClientWiring;
    const name = composeName(group, client);
    const seen = wiring.inspect(repo);
    let action: ClientAction;
    let files: FileChange[] = [];
    if (seen.status === 'unreadable') {
      action = 'skip-unreadable';
      plan.notes.push(`${client}: ${seen.problem ?? 'a config file cannot be parsed, left alone'}`);
    } else if (seen.status === 'handwritten' && (!options.force || !wiring.forceable)) {
      action = 'skip-handwritten';
      plan.notes.push(`${client}: hand-written agent-bus entry left alone${wiring.forceable ? ' (use --force to replace it)' : ''}`);
    } else {
      try {
        const planned = wiring.plan(repo, options.launcher, options.remote ?? null, options.hooks ?? 'auto');
        files = planned.files;
        for (const note of planned.notes ?? []) plan.notes.push(`${client}: ${note}`);
      } catch (error) {
        plan.notes.push(`${client}: ${(error as Error).message}`);
        plan.clients.push({ client, name, action: 'skip-unreadable', previous_name: null, files: [] });
        continue;
      }
      action = seen.status === 'absent' ? 'write' : 'refresh';
      if (seen.status !== 'absent' && !changed(files) && seen.previousName === name) action = 'refresh';
    }
    const previous = seen.previousName !== null && seen.previousName !== name ? seen.previousName : null;
    if (previous !== null && (action === 'write' || action === 'refresh')) plan.notes.push(`renaming from ${quoted(previous)} to ${quoted(name)}`);
    plan.clients.push({ client, name, action, previous_name: previous, files });
  }
  const actions = plan.clients.map((client) => client.action);
  plan.action = actions.includes('refresh') ? 'refresh' : actions.includes('write') ? 'write' : actions.includes('skip-unreadable') ? 'skip-unreadable' : 'skip-handwritten';
  plan.previous_name = plan.clients.find((client) => client.previous_name !== null)?.previous_name ?? null;
  if (!actions.includes('write') && !actions.includes('refresh')) plan.pin = null;
  return plan;
}

/** Two repos of one run must not share a name: the later one takes its parent folder's name in front. */
function deconflict(plans: RepoPlan[], options: PlanOptions): RepoPlan[] {
  const taken = new Map<string, string>();
  return plans.map((plan) => {
    if (plan.name === null || plan.action.startsWith('skip')) return plan;
    const first = taken.get(plan.name);
    if (first === undefined) {
      taken.set(plan.name, plan.repo);
      return plan;
    }
    const renamed = planRepo(plan.repo, { ...options, name: `${basename(dirname(plan.repo))}-${plan.name}` });
    renamed.notes.push(`renamed to deconflict with ${first}`);
    if (renamed.name) taken.set(renamed.name, renamed.repo);
    return renamed;
  });
}

/** With no path given, `cwd` stands for the repo it is in (its git top level), or with --scan for the folder to search. */
export function planInit(options: PlanOptions, cwd: string): RepoPlan[] {
  const here = options.scan ? cwd : (gitRoot(cwd) ?? cwd);
  const paths = (options.paths.length > 0 ? options.paths : [here]).map((path) => canonicalPath(resolve(cwd, path)));
  const repos = options.scan ? [...new Set(paths.flatMap(scanRepos))] : paths;
  return deconflict(repos.map((repo) => planRepo(repo, options)), options);
}

export function repoChanges(plan: RepoPlan): boolean {
  return (plan.pin !== null && plan.pin.before !== plan.pin.after) || plan.clients.some((client) => (client.action === 'write' || client.action === 'refresh') && changed(client.files));
}

/** Whether init wires the repo (it writes, or finds its wiring current): what puts its addresses on the roster. */
export function wires(plan: RepoPlan): boolean {
  return plan.clients.some((client) => client.action === 'write' || client.action === 'refresh');
}
