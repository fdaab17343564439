/**
 * The layout's rule (docs/architecture.md): src/ is a stack of layers, each
 * importing only layers below it, with no import cycle between files or
 * between folders (type imports included). This test reads every import of
 * src/ and fails on an upward import or a cycle, naming the lines to fix.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Bottom to top. A file may import its own layer and those listed before it. */
const LAYERS = [
  'core',
  'tools',
  'isolation',
  'mcp-client',
  'executor',
  'models',
  'agent',
  'index',
  'examples',
  'adapters',
  'cli',
] as const;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) ? [path] : [];
  });
}

const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

/** Every relative import of src/, type imports and dynamic imports included: [from, to], as paths from the repository root. */
function imports(): [string, string][] {
  return sourceFiles('src').flatMap((file) =>
    [...readFileSync(join(root, file), 'utf8').matchAll(IMPORT)].map(([, spec]): [string, string] => {
      const target = normalize(join(dirname(file), spec!));
      return [file, target.endsWith('.js') ? target.replace(/\.js$/, '.d.ts') : target];
    }),
  );
}

function layerOf(file: string): string {
  const [, first] = relative('.', file).split('/');
  return first === 'index.ts' ? 'index' : first!;
}

/** The strongly connected groups of more than one node (Tarjan). */
function cycles(nodes: string[], next: (node: string) => string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const other of next(node)) {
      if (!index.has(other)) {
        visit(other);
        low.set(node, Math.min(low.get(node)!, low.get(other)!));
      } else if (onStack.has(other)) low.set(node, Math.min(low.get(node)!, index.get(other)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) found.push(group);
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}

describe('the layers of src/', () => {
  const edges = imports();

  test('every folder of src/ is a known layer, and the root holds at most 8 files', () => {
    const top = readdirSync(join(root, 'src'), { withFileTypes: true });
    const unknown = top
      .filter((entry) => entry.isDirectory() && !(LAYERS as readonly string[]).includes(entry.name))
      .map((entry) => entry.name);
    expect(unknown, 'a new folder needs its place in LAYERS (and docs/architecture.md)').toEqual([]);
    expect(top.filter((entry) => entry.isFile()).length).toBeLessThanOrEqual(8);
  });

  test('no layer imports a layer above it', () => {
    const upward = edges
      .filter(([from, to]) => LAYERS.indexOf(layerOf(to) as never) > LAYERS.indexOf(layerOf(from) as never))
      .map(([from, to]) => `${from} (${layerOf(from)}) imports ${to} (${layerOf(to)})`);
    expect(upward).toEqual([]);
  });

  test('no import cycle between files', () => {
    const next = new Map<string, string[]>();
    for (const [from, to] of edges) next.set(from, [...(next.get(from) ?? []), to]);
    expect(cycles([...next.keys()], (file) => next.get(file) ?? [])).toEqual([]);
  });

  test('no import cycle between folders', () => {
    const next = new Map<string, Set<string>>();
    for (const [from, to] of edges) {
      if (dirname(from) === dirname(to)) continue;
      next.set(dirname(from), (next.get(dirname(from)) ?? new Set()).add(dirname(to)));
    }
    expect(cycles([...next.keys()], (dir) => [...(next.get(dir) ?? [])])).toEqual([]);
  });

  test('the check sees a cycle when there is one', () => {
    const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a'], d: ['a'] };
    expect(cycles(Object.keys(graph), (node) => graph[node] ?? []).map((group) => group.sort())).toEqual([
      ['a', 'b', 'c'],
    ]);
  });
});
