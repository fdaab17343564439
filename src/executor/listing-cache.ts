import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toolpoolVersion } from '../core/version.ts';
import type { Isolation } from '../core/tool.ts';
import { compileCacheDir } from '../isolation/worker/cache-folder.ts';
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
    const text = await readBounded(listingFile(key));
    if (text === undefined) return undefined;
    const stored = JSON.parse(text) as unknown;
    if (typeof stored !== 'object' || stored === null) return undefined;
    if ((stored as { skipped?: unknown }).skipped === true) return { skipped: true };
    const info = (stored as { info?: unknown }).info;
    return typeof info === 'object' && info !== null ? { info: info as ToolInfo } : undefined;
  } catch {
    return undefined;
  }
}

/** The most a listing file may hold: a tool's info is checked against far smaller bounds. */
const MAX_LISTING_BYTES = 4 * 1024 * 1024;

/**
 * The file's text when it is a regular file (not a link, a FIFO or a device
 * that a tool planted: opened without following links and without blocking)
 * of at most MAX_LISTING_BYTES; undefined otherwise.
 */
async function readBounded(file: string): Promise<string | undefined> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size > MAX_LISTING_BYTES) return undefined;
    const buffer = Buffer.alloc(stats.size + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    // Grown since the stat: not a listing this process wrote (those are renamed into place whole).
    if (length > stats.size) return undefined;
    return buffer.toString('utf8', 0, length);
  } finally {
    await handle.close();
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
