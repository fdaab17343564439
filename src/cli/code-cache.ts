import Module from 'node:module';
import { ownedCodeCacheDir } from '../isolation/worker/cache-folder.ts';

type EnableCompileCache = (directory: string) => unknown;

/**
 * Turns on Node's compile cache (V8's compiled code of each module, kept on
 * disk) for the CLI's main thread, so a second start of `toolpool serve`,
 * which an MCP client makes on every launch, skips compiling toolpool, the
 * MCP SDK and their dependencies again: about 40 ms of the ~300 ms to its
 * first tools/list (BENCHMARKS.md, case 18). Node 22.1+; before, a no-op.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off (Node reads it).
 *
 * Node checks an entry only against sums anyone can compute, and code read
 * from it runs on the host: it lives in `~/.cache/toolpool/v8` (ownedCodeCacheDir),
 * a folder only this user may enter, which no tool may be granted a write
 * in or over (a tool in a tier that is not a wall can write it, as it can
 * write node_modules). Node enables it per thread: the tools' workers never read
 * it, and a tool under `permissions` may not turn it on for itself
 * (permission-walls.ts). Left off for a library user's process: that is the
 * application's choice.
 */
export function enableCodeCache(): void {
  const enable = (Module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== 'function') return;
  const folder = ownedCodeCacheDir();
  // Only a speed-up: without a folder of its own (a read-only home, one another user could enter) the command runs without it.
  if (folder === undefined) return;
  try {
    enable(folder);
  } catch {
    // The same when Node cannot use it.
  }
}
