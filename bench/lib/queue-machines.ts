import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from './toolpool.ts';

/** A worker machine of case 16: a long-lived child process (bench/children/queue-machine.ts). */
export interface QueueMachine {
  /** Its process id (bench/profile/remote.ts reads its CPU time). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts one and resolves once it prints "ready" (within 60 s). */
export async function startQueueMachine(
  kind: 'toolpool' | 'raw',
  url: string,
  queue: string,
  concurrency: number,
): Promise<QueueMachine> {
  const file = fileURLToPath(new URL('../children/queue-machine.ts', import.meta.url));
  const child: ChildProcess = spawn(
    process.execPath,
    [...cpuProfileFlags(), '--import', 'tsx', file, kind, url, queue, String(concurrency)],
    {
      env: await childEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`queue machine ${kind} ${queue} not ready in 60 s: ${output}`)),
      60_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready')) clearTimeout(timer), resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once(
      'exit',
      (code) => (
        clearTimeout(timer), reject(new Error(`queue machine ${kind} ${queue} exited with ${code}: ${output}`))
      ),
    );
  });
  return {
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const ended = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await ended;
      clearTimeout(timer);
    },
  };
}

/** With REMOTE_CPU_PROF=<folder> (bench/profile/remote.ts), each machine writes a V8 CPU profile there as it exits. */
function cpuProfileFlags(): string[] {
  const folder = process.env.REMOTE_CPU_PROF;
  return folder ? ['--cpu-prof', '--cpu-prof-dir', folder] : [];
}
