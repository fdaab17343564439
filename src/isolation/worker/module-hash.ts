import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Metafile } from 'esbuild';

/**
 * What a tool module is, as a hash: the source text of the module and of
 * every file of its own it imports (relative imports, followed to the
 * end), and which import specifier leads to which of them. Not where the
 * files are: two machines with the same module at different paths get the
 * same hash, so a worker machine can tell whether it runs the module the
 * host described (the compiled output would not do: it embeds absolute
 * paths). Packages are left out, as they stay external when a module is
 * compiled; their versions are the machine's.
 */
export function moduleContentHash(
  entry: string,
  metafile: Metafile,
  sources: ReadonlyMap<string, string>,
  workingDir: string,
): string {
  const absolute = (path: string) => resolve(workingDir, path);
  const inputs = new Map(Object.entries(metafile.inputs).map(([path, input]) => [absolute(path), input]));
  const own = new Map<string, string>();
  for (const path of inputs.keys()) own.set(path, textHash(sources.get(path) ?? ''));
  // One line per file reached from the entry, in the order it is reached: its text's hash, then each import edge.
  const lines: string[] = [];
  const seen = new Map<string, number>();
  const visit = (path: string): number => {
    const known = seen.get(path);
    if (known !== undefined) return known;
    const index = seen.size;
    seen.set(path, index);
    const edges = (inputs.get(path)?.imports ?? []).filter((edge) => !edge.external);
    const line = [own.get(path) ?? textHash('')];
    for (const edge of edges) line.push(`${edge.original ?? ''}->${visit(absolute(edge.path))}`);
    lines[index] = line.join(' ');
    return index;
  };
  visit(resolve(entry));
  return textHash(lines.join('\n'));
}

/** The hash of one text, as module hashes are written (32 hex digits). */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
