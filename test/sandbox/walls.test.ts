/**
 * The sandbox's walls against what it shares with the host's kernel and
 * with other modules' sandboxes (issue "Make the walls hold"): keyrings,
 * tmpfs without a size, the PID space, /proc counters, /proc/sys under a
 * root host, one fsWrite folder given to two modules, terminal escapes in
 * what a tool prints. Each attack ran through on the code before these
 * defences. The native payload (payload.c, built into payload.b64) is
 * x86-64 Linux; the cases that need it are skipped elsewhere.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { createExecutor, type Executor, type ExecutorOptions } from '../../src/index.ts';
import { bwrapArgs } from '../../src/isolation/sandbox/bwrap-args.ts';
import { checkSandboxSupport } from '../../src/isolation/sandbox/bwrap-support.ts';
import { spacePath } from '../../src/isolation/sandbox/fs-write-spaces.ts';
import { nodeRuntimeFiles } from '../../src/isolation/sandbox/node-libraries.ts';
import { sandboxFiles } from '../../src/isolation/sandbox/sandbox-files.ts';
import { innerNprocLimit, SANDBOX_MAX_TASKS } from '../../src/isolation/sandbox/sandbox-launcher.ts';
import { runtimeFilesOf } from '../../src/isolation/sandbox/node-libraries.ts';
import { call, fixture, textOf } from '../support/executors.ts';

const sandboxWorks = await checkSandboxSupport().then(
  () => true,
  () => false,
);
const asRoot = process.geteuid?.() === 0;
/** The payload is a static x86-64 Linux program. */
const nativeRuns = sandboxWorks && process.arch === 'x64';
const payload = readFileSync(fixture('sandbox-walls/payload.b64'), 'utf8').replace(/\s+/g, '');
const scratch = mkdtempSync(join(tmpdir(), 'toolpool-walls-'));
chmodSync(scratch, 0o755);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const toolA = fixture('sandbox-walls/walls-a.ts');
const toolB = fixture('sandbox-walls/walls-b.ts');

async function withExecutor<T>(options: Partial<ExecutorOptions>, run: (executor: Executor) => Promise<T>): Promise<T> {
  const executor = await createExecutor({ tools: [toolA, toolB], isolation: 'sandbox', ...options });
  try {
    return await run(executor);
  } finally {
    await executor.close();
  }
}

async function ask(
  executor: Executor,
  tool: 'walls_a' | 'walls_b',
  action: string,
  args: string[] = [],
): Promise<string> {
  const { results } = await executor.executeBatch([
    call('1', tool, { action, args, ...(action === 'native' ? { payload } : {}) }),
  ]);
  return textOf(results[0]!);
}

describe.skipIf(!nativeRuns)('keyrings: a native payload reaches none', () => {
  test("the host's session keyring (a host started inside one, as under pam_keyinit) is not readable from the sandbox", async () => {
    const folder = mkdtempSync(join(scratch, 'session-'));
    const binary = join(folder, 'payload');
    const payloadFile = join(folder, 'payload.b64');
    writeFileSync(binary, Buffer.from(payload, 'base64'), { mode: 0o755 });
    writeFileSync(payloadFile, payload);
    const description = `toolpool-walls-${process.pid}`;
    const host = spawn(
      binary,
      [
        'session-exec',
        description,
        'hunter2-session',
        process.execPath,
        '--import',
        'tsx',
        fixture('sandbox-walls/session-host.ts'),
        description,
        payloadFile,
      ],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let stdout = '';
    host.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const code = await new Promise((resolve) => host.on('exit', resolve));
    expect(code).toBe(0);
    const { answer } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { answer: string };
    expect(answer).not.toContain('hunter2-session');
    expect(answer).toMatch(/^refused: search errno 1$/); // EPERM: the seccomp filter, not merely "no such key"
  });

  test("one module's user keyring carries nothing to another module's sandbox", async () => {
    const description = `toolpool-walls-user-${process.pid}`;
    await withExecutor({}, async (executor) => {
      const put = await ask(executor, 'walls_a', 'native', ['user-put', description, 'hunter2-user']);
      const got = await ask(executor, 'walls_b', 'native', ['user-get', description]);
      expect(got).not.toContain('hunter2-user');
      expect(put).toMatch(/^refused: add errno 1$/);
      expect(got).toMatch(/^refused: search errno 1$/);
    });
  });
});

describe.skipIf(!sandboxWorks)('exhaustion: what a sandbox can fill is bounded', () => {
  test.skipIf(!nativeRuns)(
    'a fork bomb stops at the pids limit and ends by itself; the sandbox still serves',
    async () => {
      await withExecutor({}, async (executor) => {
        // 1,000 children that each sleep 2 s: on the code before, all 1,000 were made.
        const answer = await ask(executor, 'walls_a', 'native', ['forkbomb', '1000', '2']);
        const [, made, errno] = /^forked (\d+) errno (\d+)$/.exec(answer) ?? [];
        expect(answer).toMatch(/^forked \d+ errno 11$/); // EAGAIN
        expect(Number(made)).toBeLessThan(SANDBOX_MAX_TASKS);
        expect(Number(errno)).toBe(11);
        // The children end by themselves; the module's next call then runs.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        expect(await ask(executor, 'walls_a', 'print', ['still here\n'])).toBe('printed');
      });
    },
  );

  test('/dev/shm is a tmpfs of a bounded size (64 MiB at most): filling it stops there', async () => {
    await withExecutor({ limits: { maxMemoryMb: 64 } }, async (executor) => {
      const answer = await ask(executor, 'walls_a', 'fill', ['/dev/shm/filler', '256']);
      expect(answer).toMatch(/^wrote \d+ MiB then ENOSPC$/);
      expect(Number(/wrote (\d+)/.exec(answer)![1])).toBeLessThanOrEqual(64);
    });
  });

  test('/tmp is a tmpfs of maxMemoryMb: filling it stops there', async () => {
    await withExecutor({ limits: { maxMemoryMb: 64 } }, async (executor) => {
      const answer = await ask(executor, 'walls_a', 'fill', ['/tmp/filler', '256']);
      expect(answer).toMatch(/^wrote \d+ MiB then ENOSPC$/);
      expect(Number(/wrote (\d+)/.exec(answer)![1])).toBeLessThanOrEqual(64);
    });
  });

  test('/ and /dev are read-only mounts (not merely root-owned): nothing to fill', async () => {
    await withExecutor({}, async (executor) => {
      expect(await ask(executor, 'walls_a', 'fill', ['/filler', '8'])).toBe('wrote 0 MiB then EROFS');
      expect(await ask(executor, 'walls_a', 'fill', ['/dev/filler', '8'])).toBe('wrote 0 MiB then EROFS');
    });
  });
});

describe.skipIf(!sandboxWorks)('/proc', () => {
  test("the host's counters in /proc/stat and /proc/loadavg are covered", async () => {
    await withExecutor({}, async (executor) => {
      const stat = await ask(executor, 'walls_a', 'read', ['/proc/stat']);
      const loadavg = await ask(executor, 'walls_a', 'read', ['/proc/loadavg']);
      const hostBoot = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1];
      expect(stat).toMatch(/^read: cpu +0 0 0 0 0 0 0 0 0 0\n/);
      expect(stat).toContain('\nbtime 0\n');
      expect(stat).not.toContain(`btime ${hostBoot}`);
      expect(loadavg).toBe('read: 0.00 0.00 0.00 1/1 1\n');
    });
  });

  test('/proc/sys is a read-only mount: the write fails with EROFS, not with a file mode', async () => {
    await withExecutor({}, async (executor) => {
      // UTS-namespaced, so harmless if it went through; EACCES (the mode) was the answer before.
      expect(await ask(executor, 'walls_a', 'write', ['/proc/sys/kernel/domainname', 'toolpool'])).toBe(
        'failed: EROFS',
      );
    });
  });

  test.skipIf(!asRoot)(
    'as root inside the sandbox (where the entry starts under a root host), /proc/sys still refuses the write',
    async () => {
      const bwrap = await checkSandboxSupport();
      const layout = {
        runtimeFiles: await nodeRuntimeFiles(),
        readOnly: [],
        writable: [],
        generated: [],
        lowPorts: false,
        privileged: true,
        tmpBytes: 16 * 1024 * 1024,
        workingDirectory: '/',
        procCounters: sandboxFiles().procCounters,
      };
      const script =
        "try{require('fs').writeFileSync('/proc/sys/kernel/domainname','toolpool');console.log('written',process.getuid())}catch(e){console.log(e.code,process.getuid())}";
      const run = spawnSync(bwrap, bwrapArgs(layout, [process.execPath, '-e', script]), { encoding: 'utf8', env: {} });
      expect(run.stdout.trim()).toBe('EROFS 0');
    },
  );
});

describe.skipIf(!sandboxWorks)('between modules: one fsWrite folder', () => {
  test("two modules given the same fsWrite folder each write a space of their own and cannot read the other's", async () => {
    const shared = mkdtempSync(join(scratch, 'write-'));
    chmodSync(shared, 0o777); // open to every user: the wall must not rest on file modes
    await withExecutor({ permissions: { fsRead: [shared], fsWrite: [shared] } }, async (executor) => {
      expect(await ask(executor, 'walls_a', 'write', [join(shared, 'secret.txt'), 'from module a'])).toBe('written');
      // On the code before, module b read "from module a" here.
      expect(await ask(executor, 'walls_b', 'read', [join(shared, 'secret.txt')])).toMatch(
        /^failed: (ENOENT|ERR_ACCESS_DENIED)$/,
      );
      expect(await ask(executor, 'walls_b', 'read', [join(shared, '.toolpool-modules')])).toMatch(
        /^failed: (ENOENT|ERR_ACCESS_DENIED|EISDIR)$/,
      );
      expect(await ask(executor, 'walls_a', 'read', [join(shared, 'secret.txt')])).toBe('read: from module a');
    });
    const spaceA = spacePath(realpathSync(shared), `module:${realpathSync(toolA)}`);
    expect(readFileSync(join(spaceA, 'secret.txt'), 'utf8')).toBe('from module a');
    expect(existsSync(join(shared, 'secret.txt'))).toBe(false);
  });

  test('a folder the host names in fsWriteShared is shared on purpose', async () => {
    const shared = mkdtempSync(join(scratch, 'shared-'));
    chmodSync(shared, 0o777);
    await withExecutor(
      { permissions: { fsRead: [shared], fsWrite: [shared], fsWriteShared: [shared] } },
      async (executor) => {
        expect(await ask(executor, 'walls_a', 'write', [join(shared, 'note.txt'), 'for everyone'])).toBe('written');
        expect(await ask(executor, 'walls_b', 'read', [join(shared, 'note.txt')])).toBe('read: for everyone');
      },
    );
    expect(readFileSync(join(shared, 'note.txt'), 'utf8')).toBe('for everyone');
  });

  test('fsWriteShared must name a folder of fsWrite', async () => {
    await expect(
      createExecutor({
        tools: [toolA],
        isolation: 'sandbox',
        permissions: { fsWrite: [scratch], fsWriteShared: ['/srv'] },
      }),
    ).rejects.toThrow(/permissions\.fsWriteShared \/srv is not in permissions\.fsWrite/);
  });
});

describe.skipIf(!sandboxWorks)('terminal escapes in what a tool prints', () => {
  test("carriage returns, erase-line, OSC 52 and title sequences reach the host's stderr as inert text, the [tool] mark intact", async () => {
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString());
      return true;
    });
    try {
      await withExecutor({}, async (executor) => {
        const attack =
          'harmless\r\x1b[2Ktoolpool: host log line\x1b]52;c;aHVudGVyMg==\x07\x1b]0;pwned\x07\u009b2K\u202eevil\n';
        expect(await ask(executor, 'walls_a', 'print', [attack])).toBe('printed');
        // Relayed asynchronously: wait until both copies (stdout and stderr) arrived.
        for (let i = 0; i < 100 && written.join('').split('toolpool: host log line').length < 3; i++)
          await new Promise((r) => setTimeout(r, 50));
      });
    } finally {
      spy.mockRestore();
    }
    const lines = written
      .join('')
      .split('\n')
      .filter((line) => line.includes('host log line'));
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toBe(
        '[tool] harmless\\x0d\\x1b[2Ktoolpool: host log line\\x1b]52;c;aHVudGVyMg==\\x07\\x1b]0;pwned\\x07\\x9b2K\\u202eevil',
      );
      expect(line).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    }
  });
});

/** This machine's own name, when it resolves to one of its own or a private address (as /etc/hosts makes it in most containers). */
const homeName = hostname().toLowerCase();
const homeAnswer = await lookup(homeName).then(
  ({ address }) => address,
  () => undefined,
);
const leadsHome =
  homeAnswer !== undefined &&
  /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|f[cd])/.test(homeAnswer) &&
  /^[a-z0-9.-]+$/.test(homeName);

describe.skipIf(!sandboxWorks || !leadsHome)('a listed network name cannot lead home', () => {
  test(`a listed name that resolves on the host to ${homeAnswer} (this machine's own name) does not reach the host's port`, async () => {
    const server = createServer((_request, response) => response.end('hello from the host'));
    await new Promise<void>((resolve) => server.listen(0, resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const executor = await createExecutor({
        tools: [fixture('hostile/sandbox-fetch.ts')],
        isolation: 'sandbox',
        permissions: { net: [`${homeName}:${port}`] },
      });
      try {
        const { results } = await executor.executeBatch([
          call('home', 'sandbox_fetch', { target: `http://${homeName}:${port}/` }),
        ]);
        // On the code before: "fetched 200: hello from the host".
        expect(textOf(results[0]!)).not.toContain('hello from the host');
        expect(textOf(results[0]!)).toMatch(/^failed: /);
      } finally {
        await executor.close();
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** util-linux's setpriv, to run bwrap as a user that is not root (the sandbox then makes a user namespace). */
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

describe.skipIf(!nativeRuns || !asRoot || !setpriv || !innerNprocLimit())(
  'a host that is not root: the same command line, run by another uid',
  () => {
    test('read-only /, /dev and /proc/sys, still /proc/stat, no keyrings, and a pids limit counted inside its user namespace (300 other processes of that uid do not count)', async () => {
      const uid = 0x5f00_0000 + (process.pid % 100_000);
      const folder = mkdtempSync(join(scratch, 'unprivileged-'));
      chmodSync(folder, 0o755);
      const binary = join(folder, 'payload');
      writeFileSync(binary, Buffer.from(payload, 'base64'), { mode: 0o755 });
      const files = sandboxFiles();
      const inner = innerNprocLimit()!;
      const layout = {
        runtimeFiles: [...(await nodeRuntimeFiles()), ...(await runtimeFilesOf(inner[0]!))],
        readOnly: [binary],
        writable: [],
        generated: [],
        lowPorts: false,
        privileged: false,
        tmpBytes: 16 * 1024 * 1024,
        workingDirectory: '/',
        procCounters: files.procCounters,
        seccompFd: 3,
      };
      const script = [
        "const fs=require('fs'),cp=require('child_process'),r=[];",
        "for(const p of ['/proc/sys/kernel/domainname','/f','/dev/f','/tmp/f']){try{fs.writeFileSync(p,'x');r.push(p+' ok')}catch(e){r.push(p+' '+e.code)}}",
        "r.push(fs.readFileSync('/proc/stat','utf8').split('\\n')[0]);",
        `r.push(cp.execFileSync(${JSON.stringify(binary)},['user-get','x']).toString().trim());`,
        `r.push(cp.execFileSync(${JSON.stringify(binary)},['forkbomb','400','1']).toString().trim());`,
        'console.log(JSON.stringify(r))',
      ].join('');
      // The host's files this uid must read: the sandbox files are root's 0700 folder, so hand them over as copies it can read.
      const readable = (path: string) => {
        const copy = join(folder, path.replace(/\//g, '_'));
        writeFileSync(copy, readFileSync(path), { mode: 0o644 });
        return copy;
      };
      const opened = {
        ...layout,
        procCounters: files.procCounters.map(({ source, target }) => ({ source: readable(source), target })),
      };
      // Small processes of the same uid outside the sandbox (the payload's children sleep 60 s; its parent exits at once).
      spawnSync(setpriv!, [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', binary, 'forkbomb', '300', '60'], {
        stdio: 'ignore',
      });
      const filter = openSync(files.seccomp!, 'r');
      try {
        expect(
          Number(
            spawnSync('ps', ['-u', String(uid), '--no-headers'], { encoding: 'utf8' })
              .stdout.trim()
              .split('\n').length,
          ),
        ).toBeGreaterThanOrEqual(300);
        const run = spawnSync(
          setpriv!,
          [
            `--reuid=${uid}`,
            `--regid=${uid}`,
            '--clear-groups',
            await checkSandboxSupport(),
            ...bwrapArgs(opened, [...inner, process.execPath, '-e', script]),
          ],
          {
            stdio: ['ignore', 'pipe', 'pipe', filter],
            encoding: 'utf8',
            env: {},
            timeout: 60_000,
          },
        );
        const seen = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '[]') as string[];
        expect(seen.slice(0, 4)).toEqual([
          '/proc/sys/kernel/domainname EROFS',
          '/f EROFS',
          '/dev/f EROFS',
          '/tmp/f ok',
        ]);
        expect(seen[4]).toMatch(/^cpu +0 0 0 0/);
        expect(seen[5]).toBe('refused: search errno 1');
        const made = Number(/^forked (\d+) errno 11$/.exec(seen[6] ?? '')?.[1]);
        expect(made).toBeGreaterThan(100);
        expect(made).toBeLessThan(SANDBOX_MAX_TASKS);
      } finally {
        closeSync(filter);
        spawnSync(setpriv!, [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/bin/kill', '-9', '-1'], {
          stdio: 'ignore',
        });
      }
    }, 60_000);
  },
);
