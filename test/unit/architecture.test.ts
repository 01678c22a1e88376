/**
 * The shape of the code: no folder of src/ reaches, through any chain of imports, a folder that
 * imports it back. Every import counts: static, `import type`, `export … from`, and dynamic
 * `import()` with a literal path, read by TypeScript's own pre-processor.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { ROOT } from '../helpers/bus-env.js';

const SRC = join(ROOT, 'src');

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** A file's node in the graph: its folder under src/, or for a file at the top of src/, the file itself. */
function nodeOf(file: string): string {
  const folder = dirname(relative(SRC, file));
  return folder === '.' ? relative(SRC, file) : folder;
}

/** Every import of every file, as folder-to-folder edges, each with the files that make it. */
function folderGraph(files: string[]): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName).replace(/\.js$/, '.ts');
      const from = nodeOf(file);
      const to = nodeOf(target);
      if (from === to) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} → ${fileName}`]);
    }
  }
  return graph;
}

/** The strongly connected components of more than one node (Tarjan's algorithm): each is a cycle. */
function cycles(graph: Map<string, Map<string, string[]>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node)?.keys() ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) as number, index.get(target) as number));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  const nodes = new Set([...graph.keys(), ...[...graph.values()].flatMap((edges) => [...edges.keys()])]);
  for (const node of [...nodes].sort()) if (!index.has(node)) visit(node);
  return found;
}

test('the cycle finder finds a cycle through three folders, and none in a chain', () => {
  const edge = (pairs: Array<[string, string]>): Map<string, Map<string, string[]>> => {
    const graph = new Map<string, Map<string, string[]>>();
    for (const [from, to] of pairs) graph.set(from, new Map([...(graph.get(from) ?? []), [to, [`${from}/x.ts`]]]));
    return graph;
  };
  assert.deepEqual(cycles(edge([['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd']])), [['a', 'b', 'c']]);
  assert.deepEqual(cycles(edge([['a', 'b'], ['b', 'c'], ['a', 'c']])), []);
});

test('no folder of src/ imports a folder that imports it back, type and dynamic imports included', () => {
  const files = sourceFiles(SRC);
  const graph = folderGraph(files);
  // The reader works: the CLI's commands reach the core through the runtime.
  assert.ok(graph.get('cli/commands')?.has('runtime.ts'), 'the graph has the commands → runtime.ts edge');
  assert.ok(graph.get('mcp')?.has('protocol'), 'type imports count');
  const found = cycles(graph);
  const described = found.map((component) =>
    [
      `cycle: ${component.join(' ↔ ')}`,
      ...component.flatMap((from) => [...(graph.get(from) ?? [])].filter(([to]) => component.includes(to)).flatMap(([, via]) => via.map((line) => `  ${line}`))),
    ].join('\n'),
  );
  assert.deepEqual(described, [], described.join('\n'));
});
