import { readdir } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';

/** What a tool module's file name ends with. */
const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.js', '.mjs']);
/** Folders that hold helpers or packages, not tools. */
const HELPER_FOLDERS = new Set(['lib', 'node_modules']);

/**
 * The tool modules a folder stands for in `createExecutor({ tools })` (and
 * `--tools`): every `.ts`, `.mts`, `.js` and `.mjs` file in it and in its
 * subfolders, in path order, except declarations (`.d.ts`), tests
 * (`*.test.*`, `*.spec.*`), files and folders whose name starts with `_` or
 * `.`, and the folders `lib` and `node_modules`. Those are never loaded.
 */
export async function toolModulesIn(folder: string): Promise<string[]> {
  const found: string[] = [];
  await collect(folder, found);
  return found.sort((a, b) => relative(folder, a).localeCompare(relative(folder, b)));
}

async function collect(folder: string, found: string[]): Promise<void> {
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (isHidden(entry.name)) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory() && !HELPER_FOLDERS.has(entry.name)) await collect(path, found);
    else if (entry.isFile() && isToolModuleName(entry.name)) found.push(path);
  }
}

function isHidden(name: string): boolean {
  return name.startsWith('_') || name.startsWith('.');
}

function isToolModuleName(name: string): boolean {
  return MODULE_EXTENSIONS.has(extname(name)) && !/\.d\.[mc]?ts$/.test(name) && !/\.(test|spec)\./.test(name);
}
