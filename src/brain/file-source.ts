/** A folder of markdown files with YAML front matter, one entry each. */
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { entryFrom, orderEntries, type BrainEntry, type BrainSource, type FetchResult } from './entry.js';

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

export class FileBrainSource implements BrainSource {
  readonly kind = 'file';
  constructor(readonly location: string) {}

  async fetch(): Promise<FetchResult> {
    let names: string[];
    try {
      names = readdirSync(this.location).filter((name) => name.endsWith('.md')).sort();
    } catch (error) {
      // A missing folder is a source that cannot be read, not an empty feed.
      return { ok: false, error: `cannot read the brain folder ${this.location}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
    const entries: BrainEntry[] = [];
    const warnings: string[] = [];
    for (const name of names) {
      try {
        // One kind of line end, whatever the editor wrote.
        const text = readFileSync(join(this.location, name), 'utf8').replace(/\r\n?/g, '\n');
        const match = FRONT_MATTER.exec(text);
        // An opening --- with no closing one would load the front matter as the entry's text.
        if (!match && /^\uFEFF?---[ \t]*\n/.test(text)) throw new Error('its front matter has no closing ---');
        // A YAML warning (an unknown directive) is no reason to skip an entry, and the parser would print it on stderr.
        const fields: unknown = match ? (parseYaml(shallowEnough(match[1] ?? ''), { logLevel: 'error' }) ?? {}) : {};
        if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) throw new Error('its front matter is not a mapping');
        const problems: string[] = [];
        const entry = entryFrom(fields as Record<string, unknown>, match ? text.slice(match[0].length) : text, basename(name, '.md'), problems);
        for (const problem of problems) warnings.push(`${name}: ${problem}`);
        if (entry) entries.push(entry);
      } catch (error) {
        warnings.push(`skipped ${name}: ${(error as Error).message.split('\n')[0]?.replace(/:\s*$/, '')}`);
      }
    }
    return { ok: true, entries: orderEntries(entries), warnings };
  }
}

/** Deeper than any front matter a person writes; past it the YAML parser's recursion can take the process down. */
const MAX_FRONT_MATTER_DEPTH = 64;

/** The front matter as it is, once its brackets are known to nest no deeper than MAX_FRONT_MATTER_DEPTH. */
function shallowEnough(yaml: string): string {
  let depth = 0;
  for (let index = 0; index < yaml.length; index++) {
    const code = yaml.charCodeAt(index);
    if (code === 0x5b || code === 0x7b) {
      depth += 1;
      if (depth > MAX_FRONT_MATTER_DEPTH) throw new Error(`its front matter nests deeper than ${MAX_FRONT_MATTER_DEPTH} levels`);
    } else if ((code === 0x5d || code === 0x7d) && depth > 0) depth -= 1;
  }
  return yaml;
}
