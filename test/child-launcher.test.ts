import { describe, expect, test } from 'vitest';
import { processLauncher, type ChildLauncher, type ChildSpec } from '../src/isolation/process/child-launcher.ts';
import { pidNamespaceSupport } from '../src/isolation/process/pid-namespace.ts';
import { ProcessTier } from '../src/isolation/process/process-tier.ts';
import { toRunnableModule } from '../src/isolation/worker/module-compiler.ts';
import { fixture } from './support/executors.ts';

const tierOptions = {
  minWorkers: 1,
  maxWorkers: 1,
  idleTimeoutMs: 1_000,
  loadTimeoutMs: 10_000,
  env: {},
  execArgv: [],
  hostFunctions: {},
  defaultMemoryMb: 64,
};

describe('child launcher', () => {
  test('the process tier starts its child through the launcher it is given, with the clean env and a data cap', async () => {
    const specs: ChildSpec[] = [];
    const recording: ChildLauncher = {
      name: 'recording',
      launch: (spec) => (specs.push(spec), processLauncher.launch(spec)),
    };
    const tier = new ProcessTier({
      ...tierOptions,
      launcher: recording,
      readPaths: ['/some/read'],
      writePaths: ['/some/write'],
    });
    try {
      const module = await toRunnableModule(fixture('probe.ts'));
      const info = await tier.describe({ module, source: module });
      expect(info.definition.name).toBe('probe');
    } finally {
      await tier.close();
    }
    expect(specs).toHaveLength(1);
    const [spec] = specs;
    expect(spec!.node).toBe(process.execPath);
    expect(spec!.env).toEqual({});
    expect(spec!.maxMemoryMb).toBe(64);
    expect(spec!.memoryCapBytes).toBeGreaterThan(64 * 1024 * 1024);
    expect(spec!.nodeArgs.at(-1)).toMatch(/process-child.*\.m?[jt]s$/);
    expect(spec!.readPaths).toEqual(expect.arrayContaining([spec!.nodeArgs.at(-1), '/some/read']));
    expect(spec!.writePaths).toEqual(['/some/write']);
  });

  test('the default launcher runs node under prlimit --data and --nofile, in a session of its own', async () => {
    const spec: ChildSpec = {
      node: '/bin/node',
      nodeArgs: ['--flag', 'entry.mjs'],
      env: { A: '1' },
      memoryCapBytes: 1234,
      maxMemoryMb: 1,
      maxOpenFiles: 99,
      readPaths: [],
      writePaths: [],
    };
    const launch = await processLauncher.launch(spec);
    expect(launch.command).toMatch(/prlimit$/);
    expect(launch.args.slice(0, 2)).toEqual(['--data=1234', '--nofile=99']);
    expect(launch.args.slice(-3)).toEqual(['/bin/node', '--flag', 'entry.mjs']);
    // fds 0 and 3 are toolpool's framed channel, plain sockets: not Node's IPC channel; stdout is a pipe, never the host's.
    expect(launch.options).toMatchObject({ env: { A: '1' }, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    expect(launch.options).not.toHaveProperty('serialization');
    // Where bubblewrap works, in a PID namespace of its own: the host's processes are neither visible nor signalable.
    if (await pidNamespaceSupport())
      expect(launch.args).toEqual(
        expect.arrayContaining(['--unshare-pid', '--proc', '/proc', '--new-session', '--die-with-parent']),
      );
  });
});
