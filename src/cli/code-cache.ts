import Module from 'node:module';
import { join } from 'node:path';
import { compileCacheDir } from '../isolation/worker/cache-folder.ts';

type EnableCompileCache = (directory: string) => unknown;

/**
 * Turns on Node's compile cache (V8's compiled code of each module, kept on
 * disk) for the CLI's main thread, so a second start of `toolpool serve`,
 * which an MCP client makes on every launch, skips compiling toolpool, the
 * MCP SDK and their dependencies again: about 40 ms of the ~300 ms to its
 * first tools/list (BENCHMARKS.md, case 18). Node 22.1+; before, a no-op.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off (Node reads it).
 *
 * Code read from it runs on the host, so it lives in toolpool's compile
 * cache folder: one this user owns and nobody else may write, which no
 * tool behind a wall may write either. Node enables it per thread: the
 * tools' workers never read it, and a tool under `permissions` may not turn
 * it on for itself (permission-walls.ts). Left off for a library user's
 * process: that is the application's choice.
 */
export function enableCodeCache(): void {
  const enable = (Module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== 'function') return;
  try {
    enable(join(compileCacheDir(), 'v8'));
  } catch {
    // Only a speed-up: a folder that cannot be made (a read-only TMPDIR) leaves the command as it was.
  }
}
