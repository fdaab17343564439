import { describe, expect, test } from 'vitest';
import { bwrapArgs, type SandboxLayout } from '../../src/isolation/sandbox/bwrap-args.ts';
import { parseLdd } from '../../src/isolation/sandbox/node-libraries.ts';

const layout: SandboxLayout = {
  runtimeFiles: ['/usr/bin/node', '/lib/x86_64-linux-gnu/libc.so.6'],
  readOnly: ['/srv/app/tools/calc.mjs', '/srv/app/node_modules', '/tmp/toolpool-modules-0'],
  writable: ['/srv/app/scratch'],
  generated: [{ source: '/tmp/toolpool-net-x/net.sock', target: '/run/toolpool/net.sock' }],
  lowPorts: false,
  privileged: false,
  tmpBytes: 64 * 1024 * 1024,
  workingDirectory: '/srv/app',
};

describe('bwrap command line', () => {
  test('what it shares with the kernel is bounded: sized /dev/shm (64 MiB at most) and /tmp, / and /dev read-only, /proc/sys read-only, counters covered, the seccomp filter', () => {
    const big = {
      ...layout,
      tmpBytes: 512 * 1024 * 1024,
      procCounters: [{ source: '/x/stat', target: '/proc/stat' }],
      seccompFd: 4,
    };
    const args = bwrapArgs(big, ['node']).join(' ');
    expect(args).toContain(
      `--size ${64 * 1024 * 1024} --tmpfs /dev/shm --perms 1777 --size ${512 * 1024 * 1024} --tmpfs /tmp`,
    );
    expect(args).toContain(
      '--ro-bind /proc/sys /proc/sys --ro-bind-try /proc/sysrq-trigger /proc/sysrq-trigger --ro-bind /x/stat /proc/stat',
    );
    // After every mount that goes under them.
    expect(args).toMatch(/--remount-ro \/dev --remount-ro \/ --seccomp 4 -- node$/);
  });

  test("a module's own fsWrite space is shown at the folder's path, on top of an fsRead bind of the same folder", () => {
    const spaces = {
      ...layout,
      readOnly: ['/srv/app/scratch'],
      writable: [],
      writableBinds: [{ source: '/srv/app/scratch/.toolpool-modules/calc-1234abcd', target: '/srv/app/scratch' }],
    };
    const args = bwrapArgs(spaces, ['node']).join(' ');
    expect(args).toContain(
      '--ro-bind-try /srv/app/scratch /srv/app/scratch --bind-try /srv/app/scratch/.toolpool-modules/calc-1234abcd /srv/app/scratch',
    );
  });

  test('every namespace, a session of its own, dies with the host, no capabilities, no nested user namespaces, never --as-pid-1', () => {
    const args = bwrapArgs(layout, ['/usr/bin/node', 'entry.mjs']);
    for (const flag of [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
      '--unshare-uts',
      '--die-with-parent',
      '--new-session',
      '--disable-userns',
    ]) {
      expect(args).toContain(flag);
    }
    expect(args.join(' ')).toContain('--cap-drop ALL');
    expect(args).not.toContain('--as-pid-1');
    expect(args).not.toContain('--cap-add');
    expect(args.slice(-3)).toEqual(['--', '/usr/bin/node', 'entry.mjs']);
  });

  test('an empty root: own /proc, minimal /dev, private /tmp, then only the listed paths, parents before children', () => {
    const args = bwrapArgs(layout, ['node']).join(' ');
    expect(args).toContain(
      `--proc /proc --dev /dev --perms 1777 --size ${64 * 1024 * 1024} --tmpfs /dev/shm --perms 1777 --size ${64 * 1024 * 1024} --tmpfs /tmp`,
    );
    expect(args).toContain('--ro-bind /usr/bin/node /usr/bin/node');
    expect(args).toContain('--bind-try /srv/app/scratch /srv/app/scratch');
    expect(args).toContain('--ro-bind /tmp/toolpool-net-x/net.sock /run/toolpool/net.sock');
    expect(args.indexOf('--tmpfs /tmp')).toBeLessThan(args.indexOf('/tmp/toolpool-modules-0'));
    expect(args.indexOf('/srv/app/node_modules')).toBeLessThan(args.indexOf('/srv/app/tools/calc.mjs'));
    expect(args).not.toMatch(/--(ro-)?bind(-try)? \/ \//);
  });

  test('a port below 1024 trades --disable-userns for CAP_NET_BIND_SERVICE (the forwarder must listen there)', () => {
    const args = bwrapArgs({ ...layout, lowPorts: true }, ['node']).join(' ');
    expect(args).toContain('--cap-drop ALL --cap-add CAP_NET_BIND_SERVICE');
    expect(args).not.toContain('--disable-userns');
  });

  test('under a root host: no user namespace (it would be host uid 0), and only what the entry needs to become nobody', () => {
    const args = bwrapArgs({ ...layout, privileged: true }, ['node']);
    expect(args).not.toContain('--unshare-user');
    expect(args).not.toContain('--disable-userns');
    expect(args.join(' ')).toContain('--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID');
    expect(args).toContain('--unshare-pid');
  });

  test('the folders above each bind are made 0755 first (privileged bwrap would make them 0700, closed to nobody), none inside a bind', () => {
    const args = bwrapArgs(layout, ['node']).join(' ');
    for (const dir of ['/usr', '/usr/bin', '/srv', '/srv/app', '/srv/app/tools', '/run', '/run/toolpool'])
      expect(args).toContain(`--perms 0755 --dir ${dir} `);
    expect(args).not.toContain('--dir /tmp ');
    expect(args.indexOf('--dir /srv/app ')).toBeLessThan(args.indexOf('--ro-bind-try /srv/app/node_modules'));
    const nested = bwrapArgs({ ...layout, readOnly: ['/srv/app/node_modules', '/srv/app/node_modules/pkg/tool.mjs'] }, [
      'node',
    ]).join(' ');
    expect(nested).not.toContain('--dir /srv/app/node_modules/pkg');
  });

  test("ldd's output gives every library and the loader", () => {
    const output = [
      '\tlinux-vdso.so.1 (0x00007ffd)',
      '\tlibdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f1)',
      '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)',
      '\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)',
    ].join('\n');
    expect(parseLdd(output)).toEqual([
      '/lib/x86_64-linux-gnu/libdl.so.2',
      '/lib/x86_64-linux-gnu/libc.so.6',
      '/lib64/ld-linux-x86-64.so.2',
    ]);
  });
});
