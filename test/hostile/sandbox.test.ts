/**
 * The hostile-tool suite in the sandbox tier: every row of the README's
 * "What isolation stops" table, plus what only a sandbox can stop
 * (signalling the host, the host's environment through procfs, host ports
 * on 127.0.0.1, files beside the tool, processes that try to outlive it).
 * Each case runs the hostile call beside a well-behaved one, then checks
 * the safe outcome, the bystander, the next call, and that nothing of the
 * sandbox is left after close().
 */
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createExecutor, type Executor, type ExecutorOptions, type ToolResultMessage } from '../../src/index.ts';
import { compiledRuntimeDir } from '../../src/isolation/worker/cache-folder.ts';
import { call, fixture, textOf } from '../support/executors.ts';
import { childPids, eventually, processesWith } from '../support/leaks.ts';

const scratch = mkdtempSync(join(tmpdir(), 'toolpool-sandbox-'));
// Under a root host the sandbox runs as nobody: the folder it reads and writes must let that user in.
chmodSync(scratch, 0o777);
const asRoot = process.geteuid?.() === 0;
/** A host folder the sandbox is never given: the test's own fixtures. */
const besideTheTool = fixture('hostile/hostile.ts');
const unboundHostPath = fixture(`hostile/sandbox-written-${process.pid}.txt`);
const compileCacheFile = join(compiledRuntimeDir(), `poisoned-${process.pid}.mjs`);
const nodeModulesFile = fixture(`../../node_modules/poisoned-${process.pid}.mjs`);
const ORPHAN_MARKER = `toolpool-orphan-${process.pid}`;

const ABSTRACT_SOCKET = `toolpool-abstract-${process.pid}`;
let abstractServer: Server;
let hostServer: Server;
let otherServer: Server;
let hostPort = 0;
let otherPort = 0;

beforeAll(async () => {
  [hostServer, hostPort] = await listen('hello from the host');
  [otherServer, otherPort] = await listen('the other port');
  // A host service on an abstract Unix socket (as X11 and D-Bus use): those belong to the network namespace.
  abstractServer = createServer((_request, response) => response.end('abstract'));
  await new Promise<void>((resolve) => abstractServer.listen(`\0${ABSTRACT_SOCKET}`, resolve));
});
afterAll(async () => {
  await Promise.all(
    [hostServer, otherServer, abstractServer].map((server) => new Promise((resolve) => server.close(resolve))),
  );
  rmSync(scratch, { recursive: true, force: true });
  rmSync(unboundHostPath, { force: true });
});

async function listen(body: string): Promise<[Server, number]> {
  const server = createServer((_request, response) => response.end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, (server.address() as AddressInfo).port];
}

/** A test server on a free port below 1024 (root only), below fetch()'s blocked ports 989-995. */
async function listenLow(body: string): Promise<[Server, number]> {
  for (let port = 988; port > 900; port--) {
    const server = createServer((_request, response) => response.end(body));
    const ok = await new Promise<boolean>((resolve) =>
      server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)),
    );
    if (ok) return [server, port];
  }
  throw new Error('no free port below 1024');
}

const locked: Partial<ExecutorOptions> = { permissions: { fsRead: [scratch], fsWrite: [scratch] } };

interface SandboxCase {
  name: string;
  fixture: string;
  options?: Partial<ExecutorOptions>;
  target?: () => string;
  expectResult: (result: ToolResultMessage) => void;
  expectHost?: () => void | Promise<void>;
  /** What the case tests needs an executor of its own, closed before expectHost (a process that tries to outlive it). */
  fresh?: boolean;
}

const errorMatching = (pattern: RegExp) => (result: ToolResultMessage) => {
  expect(result.isError).toBe(true);
  expect(textOf(result)).toMatch(pattern);
};
const textMatching = (pattern: RegExp) => (result: ToolResultMessage) => {
  expect(result.isError).toBe(false);
  expect(textOf(result)).toMatch(pattern);
};
const withoutSecret = (result: ToolResultMessage) => {
  expect(textOf(result)).not.toContain('hunter2');
  expect(textOf(result)).not.toContain('TOOLPOOL_TEST_SECRET');
};

/** The rows of the README table, in the sandbox tier. */
const tableRows: SandboxCase[] = [
  {
    name: 'busy loop',
    fixture: 'busy-loop.ts',
    options: { limits: { timeoutMs: 300, abortGraceMs: 100 } },
    expectResult: errorMatching(/timed out after 300 ms .*killed after the grace period/),
  },
  {
    name: 'never-settling promise',
    fixture: 'never-settles.ts',
    options: { limits: { timeoutMs: 300, abortGraceMs: 100 } },
    expectResult: errorMatching(/timed out after 300 ms .*killed/),
  },
  {
    name: 'heap bomb',
    fixture: 'heap-bomb.ts',
    options: { limits: { maxMemoryMb: 64 } },
    expectResult: errorMatching(/memory limit \(maxMemoryMb: 64 MB\)/),
  },
  {
    name: 'Buffer bomb (the data cap holds the whole sandbox child)',
    fixture: 'sandbox-buffer-bomb.ts',
    options: { limits: { maxMemoryMb: 128 } },
    expectResult: errorMatching(/memory limit \(maxMemoryMb: 128 MB\)/),
  },
  {
    // As the data cap ends a child on Node 20 at times: read from the sandbox's stderr socket, not a pipe.
    name: "V8's out-of-memory abort (report on stderr, then SIGABRT) is named as the memory limit",
    fixture: 'sandbox-v8-abort.ts',
    options: { limits: { maxMemoryMb: 128 } },
    expectResult: errorMatching(/memory limit \(maxMemoryMb: 128 MB\)/),
  },
  {
    name: 'deep recursion',
    fixture: 'deep-recursion.ts',
    expectResult: errorMatching(/Maximum call stack size exceeded/),
  },
  { name: 'process.exit', fixture: 'exit.ts', expectResult: errorMatching(/worker exited with code 3/) },
  { name: 'uncaught error in a timer', fixture: 'timer-throw.ts', expectResult: errorMatching(/boom from a timer/) },
  {
    name: 'error after return',
    fixture: 'error-after-return.ts',
    expectResult: (r) => expect(textOf(r)).toBe('returned'),
  },
  {
    name: 'unhandled rejection after return',
    fixture: 'rejection-after-return.ts',
    expectResult: (r) => expect(textOf(r)).toBe('returned'),
  },
  {
    name: 'process.kill of its own pid',
    fixture: 'sandbox-kill-own-pid.ts',
    expectResult: errorMatching(/isolation process died \((signal SIGKILL|exit code 137)\)/),
  },
  {
    name: 'native crash, SIGSEGV',
    fixture: 'sandbox-native-crash.ts',
    expectResult: errorMatching(/isolation process died \((signal SIGSEGV|exit code 139)\)/),
  },
  {
    name: 'reading a secret from process.env',
    fixture: 'read-env.ts',
    target: () => 'TOOLPOOL_TEST_SECRET',
    expectResult: (r) => {
      expect(textOf(r)).toBe('(unset)');
      expect(r.details).toEqual({ names: [] });
    },
  },
  {
    name: 'reading /etc/passwd without permissions',
    fixture: 'sandbox-read.ts',
    target: () => '/etc/passwd',
    expectResult: textMatching(/^failed: ENOENT$/),
  },
  {
    name: 'reading /etc/passwd with permissions on',
    fixture: 'sandbox-read.ts',
    options: locked,
    target: () => '/etc/passwd',
    expectResult: textMatching(/^failed: (ENOENT|ERR_ACCESS_DENIED)$/),
  },
  {
    name: 'writing outside the granted folder',
    fixture: 'sandbox-write.ts',
    options: locked,
    target: () => unboundHostPath,
    expectResult: textMatching(/^failed: (ENOENT|EROFS|ERR_ACCESS_DENIED)$/),
    expectHost: () => expect(existsSync(unboundHostPath)).toBe(false),
  },
  {
    name: "poisoning toolpool's compile cache (a later executor would run it)",
    fixture: 'sandbox-write.ts',
    target: () => compileCacheFile,
    expectResult: textMatching(/^failed: EROFS$/),
    expectHost: () => expect(existsSync(compileCacheFile)).toBe(false),
  },
  {
    name: 'writing into node_modules',
    fixture: 'sandbox-write.ts',
    target: () => nodeModulesFile,
    expectResult: textMatching(/^failed: EROFS$/),
    expectHost: () => expect(existsSync(nodeModulesFile)).toBe(false),
  },
  {
    name: 'spawning a child process: it runs inside the same sandbox',
    fixture: 'sandbox-spawn.ts',
    target: () => 'probe',
    expectResult: (r) => {
      expect(r.isError).toBe(false);
      expect(JSON.parse(textOf(r))).toMatchObject({ passwd: false });
    },
  },
  {
    name: 'spawning a child process with permissions on',
    fixture: 'spawn-child.ts',
    options: locked,
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted|ENOENT/),
  },
  {
    name: 'spawning a nested worker with permissions on',
    fixture: 'nested-worker.ts',
    options: locked,
    expectResult: errorMatching(/ERR_ACCESS_DENIED|Access to this API has been restricted/),
  },
  {
    name: 'loading a native addon with permissions on',
    fixture: 'native-addon.ts',
    options: locked,
    expectResult: errorMatching(/loading addons is disabled|ERR_DLOPEN_DISABLED/),
  },
  {
    name: 'loading a native addon from a host path that is not bound',
    fixture: 'native-addon.ts',
    target: () => '/usr/lib/x86_64-linux-gnu/libz.so.1',
    expectResult: errorMatching(/cannot open shared object file|No such file/),
  },
  {
    name: 'a 64 MiB result',
    fixture: 'huge-result.ts',
    expectResult: errorMatching(/result is \d+ bytes, over the limit maxResultBytes \(8388608 bytes\)/),
  },
  {
    name: 'an update flood of 200,000 updates',
    fixture: 'update-flood.ts',
    expectResult: (r) => expect(textOf(r)).toBe('flood done'),
  },
  {
    name: 'a non-cloneable result (class instance with methods)',
    fixture: 'non-cloneable.ts',
    expectResult: errorMatching(/result.details.handle is an instance of Handle, not plain data/),
  },
  {
    name: 'a result with a __proto__ key',
    fixture: 'proto-key.ts',
    expectResult: (r) => {
      expect(r.isError).toBe(false);
      expect(Object.getPrototypeOf(r.details)).toBe(Object.prototype);
    },
    expectHost: () => expect(({} as Record<string, unknown>).polluted).toBeUndefined(),
  },
  {
    name: 'mutating Object.prototype inside the worker',
    fixture: 'mutate-prototype.ts',
    expectResult: (r) => expect(textOf(r)).toBe('mutated'),
    expectHost: () => expect(({} as Record<string, unknown>).hijacked).toBeUndefined(),
  },
];

/** What only an OS sandbox stops. */
const sandboxRows: SandboxCase[] = [
  // Its parent is the sandbox's own init (bwrap), which ignores the signal; under a root host it is root's and refuses it.
  {
    name: "process.kill(process.ppid): the parent is the sandbox's own init",
    fixture: 'sandbox-signal.ts',
    target: () => 'ppid',
    expectResult: textMatching(asRoot ? /^refused: EPERM$/ : /^sent to 1 \(ppid 1\)$/),
  },
  {
    name: "kill -9 -1: only the sandbox's own processes",
    fixture: 'sandbox-signal.ts',
    target: () => 'all',
    expectResult: textMatching(/^(sent to -1|refused: ESRCH)/),
  }, // ESRCH: nothing else in the sandbox to signal
  {
    name: "kill(0), the process group: only the sandbox's own session",
    fixture: 'sandbox-signal.ts',
    target: () => 'group',
    expectResult: errorMatching(/isolation process died \((signal SIGKILL|exit code 137)\)/),
  },
  {
    name: "process.kill of the host's pid: not visible",
    fixture: 'sandbox-signal.ts',
    target: () => String(process.pid),
    expectResult: textMatching(/^refused: ESRCH$/),
  },
  {
    name: "reading the host's environment through /proc/<host pid>/environ",
    fixture: 'sandbox-read.ts',
    target: () => `/proc/${process.pid}/environ`,
    expectResult: (r) => {
      textMatching(/^failed: ENOENT$/)(r);
      withoutSecret(r);
    },
  },
  {
    name: "reading /proc/1/environ (the sandbox's init, bwrap)",
    fixture: 'sandbox-read.ts',
    target: () => '/proc/1/environ',
    expectResult: withoutSecret,
  },
  // Under a root host the sandbox became nobody after it started: the kernel then keeps its own procfs files root's (EACCES).
  {
    name: 'reading /proc/self/environ',
    fixture: 'sandbox-read.ts',
    target: () => '/proc/self/environ',
    expectResult: (r) => {
      textMatching(asRoot ? /^failed: EACCES$/ : /^read: /)(r);
      withoutSecret(r);
    },
  },
  {
    name: 'reading a file beside the tool that was not granted',
    fixture: 'sandbox-read.ts',
    target: () => besideTheTool,
    expectResult: textMatching(/^failed: ENOENT$/),
  },
  {
    name: 'reaching a host port on 127.0.0.1',
    fixture: 'sandbox-connect.ts',
    target: () => `127.0.0.1:${hostPort}`,
    expectResult: textMatching(/^failed: ECONNREFUSED$/),
  },
  {
    name: 'fetching from a host port on 127.0.0.1',
    fixture: 'sandbox-fetch.ts',
    target: () => `http://127.0.0.1:${hostPort}/`,
    expectResult: textMatching(/^failed: ECONNREFUSED$/),
  },
  {
    name: 'reaching a host service on an abstract Unix socket',
    fixture: 'sandbox-connect.ts',
    target: () => `unix:@${ABSTRACT_SOCKET}`,
    expectResult: textMatching(/^failed: ECONNREFUSED$/),
  },
  {
    name: 'reaching the internet by address',
    fixture: 'sandbox-connect.ts',
    target: () => '1.1.1.1:443',
    expectResult: textMatching(/^failed: ENETUNREACH$/),
  },
  {
    name: 'resolving a name (no DNS inside)',
    fixture: 'sandbox-fetch.ts',
    target: () => 'http://example.com/',
    expectResult: textMatching(/^failed: (EAI_AGAIN|ENOTFOUND)$/),
  },
  {
    name: "reopening its stdout and stderr through /proc/self/fd (the host's log file or terminal); descriptors the host leaked",
    fixture: 'sandbox-reopen-stdio.ts',
    expectResult: (r) => {
      expect(textOf(r)).toBe('fd 1: ENXIO; fd 2: ENXIO');
      expect(r.details).toEqual({ inherited: [] });
    },
  },
  {
    name: 'a spawned process that detaches to outlive the sandbox',
    fixture: 'sandbox-spawn.ts',
    fresh: true,
    target: () => ORPHAN_MARKER,
    expectResult: textMatching(/^spawned \d+$/),
    expectHost: async () =>
      expect(
        await eventually(
          () => processesWith(ORPHAN_MARKER),
          (pids) => pids.length === 0,
        ),
      ).toEqual([]),
  },
];

/**
 * Each hostile module is a trust domain of its own, so it runs in a sandbox
 * child of its own, apart from the bystander's and the probe's: cases with
 * the same options share one executor (started once, not once per case),
 * and what a case does to its own child (kill it, crash it) is what a
 * fresh executor would see too. A case that needs its executor closed
 * before its host check (a process trying to outlive the sandbox) gets one
 * of its own. After the last case, closing the shared executors leaves
 * nothing of any sandbox behind.
 */
describe('hostile tools in the sandbox tier', () => {
  const cases = [...tableRows, ...sandboxRows];
  const sharedKey = (hostile: SandboxCase) => JSON.stringify(hostile.options ?? {});
  const shared = new Map<string, Promise<Executor>>();
  const optionsFor = (hostile: SandboxCase, group: SandboxCase[]): ExecutorOptions => ({
    tools: [
      ...new Set(group.map((member) => fixture(`hostile/${member.fixture}`))),
      fixture('hostile/sandbox-bystander.ts'),
      fixture('probe.ts'),
    ],
    isolation: 'sandbox',
    workers: { min: 1, max: 2 },
    ...hostile.options,
  });
  const executorFor = (hostile: SandboxCase): Promise<Executor> => {
    if (hostile.fresh) return createExecutor(optionsFor(hostile, [hostile]));
    const key = sharedKey(hostile);
    let executor = shared.get(key);
    if (!executor) {
      const group = cases.filter((other) => !other.fresh && sharedKey(other) === key);
      shared.set(key, (executor = createExecutor(optionsFor(hostile, group))));
    }
    return executor;
  };

  beforeAll(() => {
    process.env.TOOLPOOL_TEST_SECRET = 'hunter2';
  });
  afterAll(async () => {
    await Promise.allSettled([...shared.values()].map(async (executor) => (await executor).close()));
  });

  test.each(cases)('$name', async (hostile) => {
    // The shared executors' children live on until the last test: a fresh executor must leave none of its own.
    const childrenBefore = new Set(childPids());
    const newChildren = () => childPids().filter((pid) => !childrenBefore.has(pid));
    const executor = await executorFor(hostile);
    const name = hostile.fixture.replace(/\.ts$/, '').replaceAll('-', '_');
    expect(executor.definitions.map((tool) => tool.name)).toContain(name);
    try {
      const batch = await executor.executeBatch([
        call('hostile', name, hostile.target ? { target: hostile.target() } : {}),
        call('bystander', 'bystander', { ms: 20, tag: 'intact' }),
      ]);
      hostile.expectResult(batch.results[0]!);
      expect(batch.results[1]).toMatchObject({ isError: false, content: [{ type: 'text', text: 'slept 20 intact' }] });
      const next = await executor.executeBatch([call('next', 'probe', { action: 'ok', tag: 'served' })]);
      expect(textOf(next.results[0]!)).toBe('ok served');
    } finally {
      if (hostile.fresh) await executor.close();
    }
    await hostile.expectHost?.();
    if (hostile.fresh) expect(await eventually(newChildren, (pids) => pids.length === 0)).toEqual([]);
  });

  test('closing the executors that ran every case leaves nothing of any sandbox behind', async () => {
    expect(shared.size).toBeGreaterThan(1);
    const executors = await Promise.all(shared.values());
    shared.clear();
    await Promise.all(executors.map((executor) => executor.close()));
    expect(await eventually(childPids, (pids) => pids.length === 0)).toEqual([]);
  });
});

describe('the network allowlist (permissions.net)', () => {
  const allowOnly = (entries: string[]) => ({ isolation: 'sandbox' as const, permissions: { net: entries } });
  const tools = [
    fixture('hostile/sandbox-fetch.ts'),
    fixture('hostile/sandbox-connect.ts'),
    fixture('hostile/sandbox-raw-proxy.ts'),
  ];

  test('a tool allowed 127.0.0.1:PORT fetches from it with plain fetch() and net.connect; another port stays unreachable', async () => {
    const executor = await createExecutor({ tools, ...allowOnly([`127.0.0.1:${hostPort}`]) });
    try {
      const { results } = await executor.executeBatch([
        call('allowed', 'sandbox_fetch', { target: `http://127.0.0.1:${hostPort}/` }),
        call('other', 'sandbox_fetch', { target: `http://127.0.0.1:${otherPort}/` }),
        call('tcp', 'sandbox_connect', { target: `127.0.0.1:${hostPort}` }),
      ]);
      expect(textOf(results[0]!)).toBe('fetched 200: hello from the host');
      expect(textOf(results[1]!)).toBe('failed: ECONNREFUSED');
      expect(textOf(results[2]!)).toMatch(/^connected: HTTP\/1\.[01] 200 OK/);
    } finally {
      await executor.close();
    }
  });

  test("with Node's permission model on top (fsRead/fsWrite given), a listed target is still reached and another is not", async () => {
    const executor = await createExecutor({
      tools,
      isolation: 'sandbox',
      permissions: { fsRead: [scratch], fsWrite: [scratch], net: [`127.0.0.1:${hostPort}`] },
    });
    try {
      const { results } = await executor.executeBatch([
        call('allowed', 'sandbox_fetch', { target: `http://127.0.0.1:${hostPort}/` }),
        call('other', 'sandbox_fetch', { target: `http://127.0.0.1:${otherPort}/` }),
      ]);
      expect(textOf(results[0]!)).toBe('fetched 200: hello from the host');
      expect(textOf(results[1]!)).toBe('failed: ECONNREFUSED');
    } finally {
      await executor.close();
    }
  });

  // Binding a port below 1024 on the host for the test server needs root; the sandbox side does not.
  test.skipIf(process.getuid?.() !== 0)(
    'a port below 1024 (the forwarder then listens with CAP_NET_BIND_SERVICE)',
    async () => {
      const [server, port] = await listenLow('hello from a low port');
      try {
        const executor = await createExecutor({ tools, ...allowOnly([`localhost:${port}`]) });
        try {
          const { results } = await executor.executeBatch([
            call('low', 'sandbox_fetch', { target: `http://localhost:${port}/` }),
          ]);
          expect(textOf(results[0]!)).toBe('fetched 200: hello from a low port');
        } finally {
          await executor.close();
        }
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  test('a listed host name resolves inside the sandbox to its forwarder; unlisted names do not resolve', async () => {
    const executor = await createExecutor({ tools, ...allowOnly([`localhost:${hostPort}`]) });
    try {
      const { results } = await executor.executeBatch([
        call('named', 'sandbox_fetch', { target: `http://localhost:${hostPort}/` }),
        call('literal', 'sandbox_fetch', { target: `http://127.0.0.1:${hostPort}/` }),
        call('other-name', 'sandbox_fetch', { target: 'http://example.com/' }),
      ]);
      expect(textOf(results[0]!)).toBe('fetched 200: hello from the host');
      expect(textOf(results[1]!)).toBe('failed: ECONNREFUSED');
      expect(textOf(results[2]!)).toMatch(/^failed: (ENOTFOUND|EAI_AGAIN)$/);
    } finally {
      await executor.close();
    }
  });

  test('speaking to the host-side proxy directly: only listed targets are tunnelled, the rest gets 403', async () => {
    const executor = await createExecutor({ tools, ...allowOnly([`127.0.0.1:${hostPort}`]) });
    try {
      const { results } = await executor.executeBatch([
        call('listed', 'sandbox_raw_proxy', { target: `127.0.0.1:${hostPort}` }),
        call('other-port', 'sandbox_raw_proxy', { target: `127.0.0.1:${otherPort}` }),
        call('by-name', 'sandbox_raw_proxy', { target: `localhost:${hostPort}` }),
        call('injected', 'sandbox_raw_proxy', { target: `127.0.0.1:${otherPort}\r\nX: 127.0.0.1:${hostPort}` }),
        call('leading-zero', 'sandbox_raw_proxy', { target: `127.0.0.1:0${hostPort}` }),
        call('other-spelling', 'sandbox_raw_proxy', { target: `127.1:${hostPort}` }),
      ]);
      expect(textOf(results[0]!)).toBe('reply: HTTP/1.1 200 Connection Established');
      expect(textOf(results[1]!)).toBe('reply: HTTP/1.1 403 Forbidden');
      expect(textOf(results[2]!)).toBe('reply: HTTP/1.1 403 Forbidden');
      for (const refused of results.slice(3)) expect(textOf(refused)).toBe('reply: HTTP/1.1 403 Forbidden');
    } finally {
      await executor.close();
    }
  });

  test('a net list outside the sandbox tier, and malformed entries, are refused at createExecutor', async () => {
    await expect(createExecutor({ tools: [], permissions: { net: ['127.0.0.1:80'] } })).rejects.toThrow(
      /only isolation "sandbox" can enforce/,
    );
    await expect(
      createExecutor({ tools: [], isolation: 'sandbox', permissions: { net: ['10.0.0.1:80'] } }),
    ).rejects.toThrow(/outside 127.0.0.0\/8; list the host by name/);
    await expect(
      createExecutor({ tools: [], isolation: 'sandbox', permissions: { net: ['example.com'] } }),
    ).rejects.toThrow(/must be "host:port"/);
    await expect(
      createExecutor({ tools: [], isolation: 'sandbox', permissions: { net: ['example.com:0'] } }),
    ).rejects.toThrow(/port outside 1-65535/);
  });
});
