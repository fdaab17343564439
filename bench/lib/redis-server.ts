import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, createServer, type AddressInfo } from 'node:net';

/**
 * A redis-server of its own (a test file's, a bench case's) on a free 127.0.0.1 port: without persistence, or with
 * an append-only file (fsync always) in a temp folder, which a restart after SIGKILL loads again.
 */
export interface TestRedis {
  port: number;
  url: string;
  /** Starts it (again, after stop) on the same port; resolves once it answers. */
  start(): Promise<void>;
  /** SIGKILL: the way a crashed or unreachable Redis looks to its clients. */
  stop(): Promise<void>;
}

export async function startRedis(options: { appendOnly?: boolean } = {}): Promise<TestRedis> {
  const port = await freePort();
  const persistence = options.appendOnly
    ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', mkdtempSync(join(tmpdir(), 'toolpool-redis-'))]
    : ['--appendonly', 'no'];
  let server: ChildProcess | undefined;
  const redis: TestRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (server && server.exitCode === null) return;
      server = spawn('redis-server', ['--save', '', ...persistence, '--port', String(port), '--bind', '127.0.0.1'], {
        stdio: 'ignore',
      });
      await answers(port);
    },
    async stop() {
      const running = server;
      server = undefined;
      if (!running || running.exitCode !== null) return;
      const ended = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await ended;
    },
  };
  await redis.start();
  return redis;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Resolves once the server answers PING, within 10 s. */
async function answers(port: number): Promise<void> {
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'));
      socket.once('data', (data) => (socket.destroy(), resolve(data.toString().startsWith('+PONG'))));
      socket.once('error', () => resolve(false));
    });
    if (pong) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within 10 s`);
}
