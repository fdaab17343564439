import { readdir, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { runError } from './errors.ts';

const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs']);

function isToolModule(name: string): boolean {
  return MODULE_EXTENSIONS.has(extname(name)) && !/\.d\.[mc]?ts$/.test(name) && !/\.(test|spec)\./.test(name);
}

/**
 * `--tools` values (repeatable, or comma-separated): files are taken as they
 * are; a folder contributes the tool modules directly inside it
 * (`.ts .mts .js .mjs`, not declarations or tests), in name order.
 */
export async function expandToolPaths(values: readonly string[]): Promise<string[]> {
  const paths: string[] = [];
  for (const value of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)) {
    const path = resolve(value);
    const info = await stat(path).catch(() => undefined);
    if (!info) throw runError(`--tools ${value}: no such file or folder`);
    if (info.isFile()) {
      paths.push(path);
      continue;
    }
    const names = (await readdir(path, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && isToolModule(entry.name))
      .map((entry) => entry.name)
      .sort();
    if (names.length === 0) throw runError(`--tools ${value}: the folder has no tool modules (.ts, .mts, .js, .mjs)`);
    paths.push(...names.map((name) => join(path, name)));
  }
  return paths;
}
