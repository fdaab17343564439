/**
 * Exhaustion that outlives a call, and a sandbox run by root. What a tool
 * leaves behind in its process (descriptors, /tmp) must not break the
 * later calls of its module for good, nor reach another module's calls;
 * and a sandbox started by a root host is not root on the host.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import { call, fixture, textOf, useExecutors } from '../support/executors.ts';

const createExecutor = useExecutors();
const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);
const asRoot = process.geteuid?.() === 0;

const run = async (executor: Awaited<ReturnType<typeof createExecutor>>, name: string, args: Record<string, unknown>) =>
  (await executor.executeBatch([call('1', name, args)])).results[0]!;

describe.each([
  { isolation: 'process', skip: undefined },
  { isolation: 'sandbox', skip: sandboxWorks ? undefined : 'bubblewrap cannot start here' },
])('descriptors left open, $isolation tier', ({ isolation, skip }) => {
  const tool = `exhaust_${isolation}`;
  const tools = [fixture(`exhaustion/exhaust-${isolation}.ts`)];

  test.skipIf(skip !== undefined)("a tool cannot open more than the child's RLIMIT_NOFILE (4096)", async () => {
    const executor = await createExecutor({ tools });
    const result = await run(executor, tool, { target: 'open-files', count: 6_000 });
    expect(textOf(result)).toMatch(/^opened (\d+), then EMFILE$/);
    expect(Number(/^opened (\d+)/.exec(textOf(result))![1])).toBeLessThan(4_096);
  });

  test.skipIf(skip !== undefined)(
    'a child left holding most of its descriptors is replaced: the next call of the module is served',
    async () => {
      const executor = await createExecutor({ tools });
      const first = await run(executor, tool, { target: 'open-files', count: 3_500 });
      expect(textOf(first)).toBe('opened 3500');
      // Without the replacement, 600 more would fail at 4096.
      const next = await run(executor, tool, { target: 'open-files', count: 600 });
      expect(textOf(next)).toBe('opened 600');
    },
  );
});

describe.skipIf(!sandboxWorks)('the sandbox', () => {
  test('is not root on the host, and cannot write /proc/sys or /sys (whoever runs the host)', async () => {
    const executor = await createExecutor({ tools: [fixture('exhaustion/exhaust-sandbox.ts')] });
    const seen = JSON.parse(textOf(await run(executor, 'exhaust_sandbox', { target: 'whoami' }))) as Record<
      string,
      unknown
    >;
    expect(seen.hostUid).not.toBe(0);
    if (asRoot) expect(seen.uid).not.toBe(0);
    expect(seen.procSys).not.toBe('written');
    expect(seen.sys).not.toBe('written');
  });

  test('/tmp holds at most maxMemoryMb: writing more ends with ENOSPC, the next call is served', async () => {
    const executor = await createExecutor({
      tools: [fixture('exhaustion/exhaust-sandbox.ts')],
      limits: { maxMemoryMb: 64 },
    });
    const filled = textOf(await run(executor, 'exhaust_sandbox', { target: 'fill-tmp', count: 200 }));
    expect(filled).toMatch(/^wrote (\d+) MB, then ENOSPC$/);
    expect(Number(/^wrote (\d+)/.exec(filled)![1])).toBeLessThanOrEqual(64);
    expect(textOf(await run(executor, 'exhaust_sandbox', { target: 'whoami' }))).toMatch(/"uid"/);
  });

  describe('proxy tunnels', () => {
    let server: Server;
    let port = 0;
    beforeAll(async () => {
      server = createServer((_request, response) => response.end('reached'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((resolve) => server.close(resolve)));

    test("70 unfinished CONNECTs held by one module do not cut another module's call off its listed target", async () => {
      const executor = await createExecutor({
        tools: [fixture('exhaustion/exhaust-sandbox.ts'), fixture('hostile/sandbox-fetch.ts')],
        isolation: 'sandbox',
        permissions: { net: [`127.0.0.1:${port}`] },
      });
      const [held, fetched] = (
        await executor.executeBatch([
          call('hold', 'exhaust_sandbox', { target: 'hold-tunnels', count: 70, proxy: '/run/toolpool/net.sock' }),
          call('fetch', 'sandbox_fetch', { target: `http://127.0.0.1:${port}/` }),
        ])
      ).results;
      expect(textOf(held!)).toMatch(/^holding \d+ of 70$/);
      expect(textOf(fetched!)).toContain('reached');
    });
  });
});
