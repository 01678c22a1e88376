/**
 * Every relative link of the README and the pages in docs/ leads somewhere: the file exists, and an
 * `#anchor` names a heading of the target as GitHub makes its ids. Code (fenced blocks, `spans`) is
 * not read for links. Links to other sites are not followed.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/bus-env.js';

const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];

/** The text outside fenced code blocks, each line kept (empty inside a block) so line numbers hold. */
function prose(text: string): string[] {
  let fence: string | null = null;
  return text.split('\n').map((line) => {
    const opened = /^\s*(```+|~~~+)/.exec(line);
    if (fence === null && opened) {
      fence = (opened[1] as string).slice(0, 3);
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line;
  });
}

/** A heading's id as GitHub makes it: its text lowercased, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The ids a page's headings (and its explicit anchors) get, a repeated one with -1, -2 … as GitHub does. */
function anchors(text: string): Set<string> {
  const ids = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1] as string);
      const seen = counts.get(base) ?? 0;
      counts.set(base, seen + 1);
      ids.add(seen === 0 ? base : `${base}-${seen}`);
    }
    for (const match of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) ids.add(match[1] as string);
  }
  return ids;
}

/** Every link target of a page's prose: markdown links and images, and HTML `href` and `src`. */
function links(text: string): Array<{ line: number; target: string }> {
  const found: Array<{ line: number; target: string }> = [];
  prose(text).forEach((raw, index) => {
    const line = raw.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ line: index + 1, target: match[1] as string });
    for (const match of line.matchAll(/\s(?:href|src)="([^"]+)"/g)) found.push({ line: index + 1, target: match[1] as string });
  });
  return found;
}

test("GitHub's heading ids, as the links below rely on them", () => {
  assert.equal(slug('Wiring clients to a hub: `agent-bus init --remote URL`'), 'wiring-clients-to-a-hub-agent-bus-init---remote-url');
  assert.equal(slug('Notices: channels, severity and TTL'), 'notices-channels-severity-and-ttl');
  assert.equal(slug('4. Make each client trust what init wrote'), '4-make-each-client-trust-what-init-wrote');
  assert.equal(slug('For the clients: `agent-bus help hooks`'), 'for-the-clients-agent-bus-help-hooks');
  assert.equal(slug('The [hub](hub.md) and PostgreSQL'), 'the-hub-and-postgresql');
  assert.deepEqual([...anchors('# A\n## Same\n```\n## Not a heading\n```\n## Same\n')], ['a', 'same', 'same-1']);
});

test('every relative link in the README and docs/ resolves: the file exists and its #anchor is a heading there', () => {
  const broken: string[] = [];
  let checked = 0;
  let withAnchor = 0;
  for (const page of PAGES) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const { line, target } of links(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      checked++;
      const [path = '', anchor] = target.split('#', 2);
      const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
      const where = `${page}:${line}: ${target}`;
      if (relative(ROOT, file).startsWith('..')) {
        broken.push(`${where} (outside the repository)`);
        continue;
      }
      if (!existsSync(file)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      withAnchor++;
      if (statSync(file).isDirectory() || !file.endsWith('.md')) {
        broken.push(`${where} (an anchor into something that is not a page)`);
        continue;
      }
      if (!anchors(readFileSync(file, 'utf8')).has(anchor)) broken.push(`${where} (no heading with that id in ${relative(ROOT, file)})`);
    }
  }
  assert.ok(checked > 50 && withAnchor > 30, `the links were found: ${checked}, ${withAnchor} with an anchor`);
  assert.deepEqual(broken, [], 'broken links');
});

test('the README is the front door: at most 300 lines, with a page in docs/ for each topic it lists', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 300, `the README has ${readme.split('\n').length} lines`);
  const table = readme.slice(readme.indexOf('\n## What it does\n'));
  const pages = new Set([...table.matchAll(/\]\((docs\/[^)#]+\.md)\)/g)].map((match) => match[1] as string));
  for (const topic of ['clients', 'mail', 'channels-and-brain', 'coordination', 'hub', 'integrations', 'operations', 'configuration']) {
    assert.ok(pages.has(`docs/${topic}.md`), `the table of what it does links docs/${topic}.md`);
  }
});
