import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, type ClientOptions } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const bin = fileURLToPath(new URL('../../bin/toolpool.js', import.meta.url));
export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The example tools plus the test tools made for serving (spin, meet, picture). */
export const SERVED_TOOLS = ['--tools', 'tools', '--tools', 'test/fixtures/served'];

export interface ServedClient {
  client: Client;
  /** The `toolpool serve` process. */
  pid: number;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** `toolpool serve` over stdio, driven by the official SDK client (which starts the process). */
export async function serveOverStdio(args: string[], clientOptions?: ClientOptions): Promise<ServedClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'serve', ...args],
    cwd: root,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'toolpool-test', version: '1.0.0' }, clientOptions);
  await client.connect(transport);
  return { client, pid: transport.pid!, stderr: () => stderr, close: () => client.close() };
}

/** `toolpool serve --http 0` started as a child, and an SDK client on the URL it logged. */
export async function serveOverHttp(
  args: string[],
  clientOptions?: ClientOptions,
): Promise<ServedClient & { url: string; child: ChildProcess }> {
  const child = startServe(['--http', '0', ...args]);
  const url = await waitForLine(child, /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/);
  const client = new Client({ name: 'toolpool-test', version: '1.0.0' }, clientOptions);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return {
    client,
    url,
    child,
    pid: child.pid!,
    stderr: () => child.stderrText,
    async close() {
      await client.close();
      child.kill('SIGTERM');
      await exited(child);
    },
  };
}

export type ServeChild = ChildProcess & { stderrText: string };

/** `node bin/toolpool.js serve ...` with piped stdio; stderr is collected in `stderrText`. */
export function startServe(args: string[], env: NodeJS.ProcessEnv = process.env): ServeChild {
  return startToolpool('serve', args, env);
}

/** `node bin/toolpool.js <command> ...`, the same way. */
export function startToolpool(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): ServeChild {
  const child = spawn(process.execPath, [bin, command, ...args], {
    cwd: root,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ServeChild;
  child.stderrText = '';
  child.stderr!.on('data', (chunk: Buffer) => (child.stderrText += chunk.toString()));
  return child;
}

/** Resolves with the first capture group of the first stderr line matching `pattern`. */
export function waitForLine(child: ServeChild, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(child.stderrText);
      if (!match) return;
      cleanup();
      resolve(match[1] ?? match[0]);
    };
    const timer = setTimeout(
      () => (cleanup(), reject(new Error(`no stderr line like ${pattern}; stderr: ${child.stderrText}`))),
      timeoutMs,
    );
    const onExit = () => (cleanup(), reject(new Error(`toolpool exited; stderr: ${child.stderrText}`)));
    const cleanup = () => {
      clearTimeout(timer);
      child.stderr!.off('data', check);
      child.off('exit', onExit);
    };
    child.stderr!.on('data', check);
    child.once('exit', onExit);
    check();
  });
}

/** Resolves with how the child ended. */
export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** Resolves once the child's stderr has ended (all it wrote is in `stderrText`), or after `ms` should something still hold it. */
export function stderrEnded(child: ChildProcess, ms = 5_000): Promise<void> {
  if (!child.stderr || child.stderr.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    child.stderr!.once('end', () => (clearTimeout(timer), resolve()));
  });
}

/** Processes whose parent is `pid` (the process tier's children, esbuild's service). */
export function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) pids.push(Number(entry));
    } catch {
      // it ended while we looked
    }
  }
  return pids;
}

export function isAlive(pid: number): boolean {
  return existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
}

/** CPU seconds (user + system, all threads) a process has used. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // After "pid (comm) ": state is field 3, utime 14 and stime 15, counted from 1.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds `pid` uses during the next `ms`. */
export async function cpuDuring(pid: number, ms: number): Promise<number> {
  const before = cpuSeconds(pid);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return cpuSeconds(pid) - before;
}

/** One JSON-RPC line on a raw stdio child, for tests that must see how the process ends by itself. */
export function sendLine(child: ChildProcess, message: object): void {
  child.stdin!.write(`${JSON.stringify(message)}\n`);
}

/** Waits for the JSON-RPC response with `id` on a raw stdio child's stdout. */
export function response(child: ChildProcess, id: number, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => (child.stdout!.off('data', onData), reject(new Error(`no response ${id}: ${buffer}`))),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const message = JSON.parse(line) as Record<string, unknown>;
        if (message.id === id) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolve(message);
        }
      }
    };
    child.stdout!.on('data', onData);
  });
}
