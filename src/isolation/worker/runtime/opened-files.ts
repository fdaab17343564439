import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Descriptors belong to the process, not to a thread, and a file a call
 * opened and left open is no async resource (a descriptor is a number), so
 * leftovers.ts cannot see it: a tool that leaks one per call, a bug and not
 * only an attack, would take its host to EMFILE while its worker lives.
 * Node closes a worker's `fs.open` descriptors when its thread ends
 * (`trackUnmanagedFds`, on in piscina), so it is enough to count them and
 * retire the worker past a bound. `fs.open`/`fs.openSync` and
 * `fs.close`/`fs.closeSync` are wrapped before any tool code runs; streams
 * and `readFile`/`writeFile` open and close through them. `fs.promises`
 * handles are resources of their own, closed by Node with their thread too.
 */
export interface OpenedFiles {
  /** How many descriptors opened by calls in this worker are still open. */
  readonly leftOpenByCalls: number;
}

export function trackOpenedFiles(inCall: () => boolean): OpenedFiles {
  const byCalls = new Set<number>();
  const opened = (fd: number) => {
    if (inCall()) byCalls.add(fd);
  };
  const { open, openSync, close, closeSync } = fs;

  fs.openSync = function (this: unknown, ...args: Parameters<typeof openSync>) {
    const fd = Reflect.apply(openSync, this, args) as number;
    opened(fd);
    return fd;
  } as typeof openSync;
  fs.closeSync = function (this: unknown, fd: number) {
    Reflect.apply(closeSync, this, [fd]);
    byCalls.delete(fd);
  } as typeof closeSync;
  fs.open = function (this: unknown, ...args: unknown[]) {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: unknown, fd: number) => {
        if (!error) opened(fd);
        return Reflect.apply(callback, undefined, [error, fd]);
      };
    }
    return Reflect.apply(open, this, args);
  } as typeof open;
  fs.close = function (this: unknown, fd: number, ...rest: unknown[]) {
    // Forgotten before the close, not after: the number may be handed out again before its callback runs.
    byCalls.delete(fd);
    return Reflect.apply(close, this, [fd, ...rest]);
  } as typeof close;
  syncBuiltinESMExports();

  return {
    get leftOpenByCalls() {
      return byCalls.size;
    },
  };
}
