/**
 * toolpool as a user gets it: the packed tarball installed into an empty
 * project next to that user's own TypeBox (0.32, an older minor than the
 * 0.34 toolpool is developed with), type-checked with tsc and run. This is
 * the slow file of the suite (a build and a pack, shared with the other
 * files that install the tarball, and an npm install, from the npm cache
 * when it holds the packages).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PackageErrors } from '../src/core/errors.ts';
import { packedTarball } from './support/packed-tarball.ts';
import { lineIndependentChecksRunHere } from './support/ci-lines.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules/typescript/bin/tsc');
/** The user's own TypeBox: the last 0.32 release, the oldest minor of the peer range. */
const USER_TYPEBOX = '0.32.37';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `npm` run by the Node of this test run, so the install matches the line under test. */
const npm = (args: string[], cwd: string, timeoutMs = 120_000) => run('npm', args, cwd, timeoutMs);

describe('require() of an ES module package', () => {
  test('require("toolpool") fails with a message that says to use import', async () => {
    const { code, stderr } = await run(process.execPath, ['-e', "require('toolpool')"], root, 20_000);
    expect(code).not.toBe(0);
    expect(stderr).toContain(`Error: ${PackageErrors.requireNotSupported()}`);
  });
});

describe('what the package says about itself', () => {
  test('its version is the newest release in CHANGELOG.md (Unreleased sits above it)', async () => {
    const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
    const headings = (await readFile(join(root, 'CHANGELOG.md'), 'utf8')).match(/^## .+$/gm) ?? [];
    const released = headings.filter((heading) => heading !== '## Unreleased');
    expect(released[0]).toBe(`## ${version}`);
  });

  test('the README names no internal rule codes', async () => {
    expect(await readFile(join(root, 'README.md'), 'utf8')).not.toMatch(/\bS\d{1,2}\b/);
  });
});

describe('a user project with its own TypeBox', { timeout: 300_000 }, () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'toolpool-user-'));
    // The tree's tarball, packed once for every test file and run that installs it.
    const packed = await packedTarball();
    const tarball = basename(packed);
    await copyFile(packed, join(project, tarball));
    await writeUserProject(project, tarball);
    const installed = await npm(
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'],
      project,
    );
    expect(installed.code, installed.stderr).toBe(0);
  }, 300_000);

  afterAll(async () => {
    if (project) await rm(project, { recursive: true, force: true });
  });

  test("toolpool uses the user's TypeBox: one copy, the user's version", async () => {
    const { version } = JSON.parse(
      await readFile(join(project, 'node_modules/@sinclair/typebox/package.json'), 'utf8'),
    ) as { version: string };
    expect(version).toBe(USER_TYPEBOX);
    expect(existsSync(join(project, 'node_modules/toolpool/node_modules/@sinclair/typebox'))).toBe(false);
  });

  // tsc's answer does not depend on the Node line: CI asks it on one line (support/ci-lines.ts).
  test.skipIf(!lineIndependentChecksRunHere)(
    'a tool and a host written with TypeBox 0.32 type-check (args typed from the schema)',
    async () => {
      // tsc over the project and toolpool's declarations: with a CPU burner beside the suite it took over 120 s.
      const checked = await run(process.execPath, [tsc, '-p', project], project, 240_000);
      expect(checked.stdout + checked.stderr).toBe('');
      expect(checked.code).toBe(0);
    },
  );

  test('they run: the module tools in workers, their arguments validated and coerced', async () => {
    const ran = await run(process.execPath, ['host.mjs'], project, 60_000);
    expect(ran.stderr).toBe('');
    expect(ran.stdout.trim()).toBe('HELLO x3\n5');
  });

  // Their entries (the child's, its worker's) are bundled into one file each by the build (scripts/bundle-runtime.mjs).
  test('the process and sandbox tiers run them too, from the built entries', async () => {
    const ran = await run(process.execPath, ['tiers.mjs'], project, 60_000);
    expect(ran.stderr).toBe('');
    expect(ran.stdout.trim()).toBe('process: HELLO x2\nsandbox: HELLO x2');
  });

  test('the published declarations carry no internal rule codes', async () => {
    const dist = join(project, 'node_modules/toolpool/dist');
    const declarations = (await readdir(dist, { recursive: true })).filter((name) => name.endsWith('.d.ts'));
    expect(declarations).toContain(join('src', 'core', 'typebox-static.d.ts'));
    for (const name of declarations) expect(await readFile(join(dist, name), 'utf8'), name).not.toMatch(/\bS\d{1,2}\b/);
  });

  test('require("toolpool") from the installed package says to use import', async () => {
    const required = await run(process.execPath, ['-e', "require('toolpool')"], project, 20_000);
    expect(required.stderr).toContain(PackageErrors.requireNotSupported());
  });
});

async function writeUserProject(dir: string, tarball: string): Promise<void> {
  const files: Record<string, string> = {
    'package.json': JSON.stringify({
      name: 'toolpool-user',
      private: true,
      type: 'module',
      // No typebox 1.x: the types that bridge to it must still compile without it (skipLibCheck is off).
      dependencies: { toolpool: `file:./${tarball}`, '@sinclair/typebox': USER_TYPEBOX, zod: '4.6.7' },
      devDependencies: { '@types/node': '20.19.43' },
    }),
    'tsconfig.json': JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        types: ['node'],
      },
      include: ['*.ts'],
    }),
    // The README's tool, with a line that must not type-check if args were `any`.
    'shout.ts': `import { Type } from '@sinclair/typebox';
import { defineTool } from 'toolpool';

export default defineTool({
  name: 'shout',
  description: 'Repeat a word in capitals',
  parameters: Type.Object({ word: Type.String({ minLength: 1 }), times: Type.Integer({ minimum: 1 }) }),
  execute({ word, times }) {
    if (times < 0) {
      // @ts-expect-error -- times is a number, so it has no toUpperCase (never runs: times >= 1)
      times.toUpperCase();
    }
    return { content: [{ type: 'text', text: word.toUpperCase() + ' x' + times.toFixed(0) }] };
  },
});
`,
    // A Zod 4 tool: args typed from the schema's output (the transform makes a number).
    'count.ts': `import { z } from 'zod';
import { defineTool } from 'toolpool';

export default defineTool({
  name: 'count',
  description: 'Count the letters of a word',
  parameters: z.object({ word: z.string().transform((word) => word.length) }),
  execute({ word }) {
    return { content: [{ type: 'text', text: word.toFixed(0) }] };
  },
});
`,
    // Type-checked only: \`await using\` closes the executor (Symbol.asyncDispose).
    'host.ts': `import { createExecutor, type ToolResultMessage } from 'toolpool';

await using executor = await createExecutor({ tools: [new URL('./shout.ts', import.meta.url)] });
const { results }: { results: ToolResultMessage[] } = await executor.executeBatch([{ id: '1', name: 'shout', arguments: { word: 'hello', times: '3' } }]);
console.log(results[0]!.content);
`,
    // What the test runs: the same host in JavaScript, loading the same TypeScript tool module.
    'host.mjs': `import { createExecutor } from 'toolpool';

const executor = await createExecutor({ tools: [new URL('./shout.ts', import.meta.url), new URL('./count.ts', import.meta.url)] });
const { results } = await executor.executeBatch([
  { id: '1', name: 'shout', arguments: { word: 'hello', times: '3' } },
  { id: '2', name: 'count', arguments: { word: 'hello' } },
]);
for (const result of results) console.log(result.isError ? 'error: ' + result.content[0].text : result.content[0].text);
await executor.close();
`,
    'tiers.mjs': `import { createExecutor } from 'toolpool';

for (const isolation of ['process', 'sandbox']) {
  const executor = await createExecutor({ tools: [new URL('./shout.ts', import.meta.url)], isolation });
  const { results } = await executor.executeBatch([{ id: '1', name: 'shout', arguments: { word: 'hello', times: 2 } }]);
  console.log(isolation + ': ' + (results[0].isError ? 'error: ' : '') + results[0].content[0].text);
  await executor.close();
}
`,
  };
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text)));
}
