import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolpoolVersion } from '../core/version.ts';
import type { Isolation } from '../core/tool.ts';
import { compileCacheDir } from '../isolation/worker/module-compiler.ts';
import type { ToolInfo } from '../tools/tool-info.ts';

/**
 * What a module's worker said about it last time (its checked `ToolInfo`,
 * or that it holds no tool), kept in the compile cache under a key made of
 * the module's content hash and compiled code's hash: a module changed
 * since is a new key, so it is described anew, never listed from an old
 * entry. `toolpool serve` lists from it before any worker has started.
 *
 * The file lives where tools without permissions could write, so what is
 * read back is only ever listed: it is checked like a worker's answer, and
 * every call of the tool waits for this run's own describe in a worker
 * (see registry.ts, registerToolsListedFirst), whose answer is what runs.
 */
export type Listing = { info: ToolInfo } | { skipped: true };

/** The key of a module as compiled now, with the factory options and tier it is described with; undefined when the options are no JSON. */
export function listingKey(parts: {
  source: string;
  contentHash: string;
  codeHash?: string;
  options?: unknown;
  isolation: Isolation;
}): string | undefined {
  let text: string;
  try {
    text = JSON.stringify({ v: 1, toolpool: toolpoolVersion(), ...parts });
  } catch {
    return undefined;
  }
  return createHash('sha256').update(text).digest('hex');
}

function listingFile(key: string): string {
  return join(compileCacheDir(), 'listings', `${key}.json`);
}

/** The stored listing, unchecked (the caller checks it as a worker's word); undefined when there is none or it is unreadable. */
export async function readListing(key: string): Promise<Listing | undefined> {
  try {
    const stored = JSON.parse(await readFile(listingFile(key), 'utf8')) as unknown;
    if (typeof stored !== 'object' || stored === null) return undefined;
    if ((stored as { skipped?: unknown }).skipped === true) return { skipped: true };
    const info = (stored as { info?: unknown }).info;
    return typeof info === 'object' && info !== null ? { info: info as ToolInfo } : undefined;
  } catch {
    return undefined;
  }
}

/** Stores a listing (write, then rename: a concurrent reader never sees half a file); a failure only costs the next start its speed. */
export async function writeListing(key: string, listing: Listing): Promise<void> {
  const file = listingFile(key);
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await mkdir(join(compileCacheDir(), 'listings'), { recursive: true, mode: 0o755 });
    await writeFile(temp, JSON.stringify(listing));
    await rename(temp, file);
  } catch {
    // Not cached: the next start describes the module in a worker again.
  }
}
