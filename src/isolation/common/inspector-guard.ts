/**
 * A `SIGUSR1` sent to a Node process opens its inspector on 127.0.0.1,
 * and whoever connects runs code on its main thread. Any tool can send one
 * (`process.kill(process.pid, 'SIGUSR1')` from a worker thread, or to
 * `process.ppid` from a child), so every process that runs tool code or
 * hosts it keeps the inspector closed: with a listener for the signal,
 * Node does not open it. Installed once per process and never removed (a
 * process that wants a debugger starts with `--inspect`).
 */
let guarded = false;

export function keepInspectorClosed(): void {
  if (guarded) return;
  guarded = true;
  process.on('SIGUSR1', ignoreSignal);
}

function ignoreSignal(): void {
  // Only here so that the signal does not open the inspector.
}
