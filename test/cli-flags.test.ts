import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { inFlagTerms, nearestFlag, parseFlags } from '../src/cli/flags.ts';

const bin = fileURLToPath(new URL('../bin/toolpool.js', import.meta.url));

function toolpool(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { timeout: 60_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stderr });
    });
  });
}

describe('an unknown flag is answered with the nearest known one', () => {
  const options = {
    tools: { type: 'string' },
    'timeout-ms': { type: 'string' },
    http: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } as const;

  test.each([
    ['--toosl', '--tools'],
    ['--tool', '--tools'],
    ['--timeout', '--timeout-ms'],
    ['--htp', '--http'],
    ['--frobnicate', undefined],
    ['--x', undefined],
  ])('%s → %s', (typed, expected) => {
    expect(
      nearestFlag(
        typed,
        Object.keys(options).map((name) => `--${name}`),
      ),
    ).toBe(expected);
  });

  test('a usage error (exit 2) says "did you mean", or lists the options when nothing is near', () => {
    const parse = (args: string[]) => () => parseFlags('serve', { args, strict: true, options });
    expect(parse(['--toosl', 'x'])).toThrow(
      /^unknown option --toosl; did you mean --tools\?\nRun "toolpool serve --help" for usage\.$/,
    );
    expect(parse(['--frobnicate'])).toThrow(
      /^unknown option --frobnicate; the options are --tools, --timeout-ms, --http, --help\n/,
    );
    expect(parse(['--tools'])).toThrow(/^Option '--tools <value>' argument missing\nRun/);
  });

  test('from the command line', async () => {
    const { code, stderr } = await toolpool(['serve', '--toosl', './tools']);
    expect(code).toBe(2);
    expect(stderr).toBe(
      'toolpool: unknown option --toosl; did you mean --tools?\nRun "toolpool serve --help" for usage.\n',
    );
  });
});

describe('an executor error about an option a flag set names the flag', () => {
  test.each([
    [
      'createExecutor: option isolation must be "worker", "process" or "sandbox" (got "vm")',
      '--isolation must be "worker", "process" or "sandbox" (got "vm")',
    ],
    [
      'createExecutor: option permissions.fsRead[0] must be a non-empty path (got "")',
      '--allow-read must be a non-empty path (got "")',
    ],
    [
      'createExecutor: option limits.timeoutMs must be a positive number (got 0)',
      '--timeout-ms must be a positive number (got 0)',
    ],
    ['Tool module x.ts failed to load: boom', 'Tool module x.ts failed to load: boom'],
  ])('%s', (message, expected) => {
    expect(inFlagTerms(message)).toBe(expected);
  });

  test('toolpool serve --isolation vm', async () => {
    const { code, stderr } = await toolpool(['serve', '--tools', 'tools/calculator.ts', '--isolation', 'vm']);
    expect(code).toBe(1);
    expect(stderr).toBe('toolpool: --isolation must be "worker", "process" or "sandbox" (got "vm")\n');
  });
});
