/**
 * Where users are: the packed tarball in a fresh `npm init -y` project, set
 * up by the quick start of docs/getting-started.md exactly as written there
 * (the one change: `npm install toolpool` installs the tarball), its host run
 * the ways the page says, and the project type-checked with TypeScript 7 and
 * 5.9, strict, `skipLibCheck` off, `@types/node` installed and not named in
 * `"types"`. The README's quick start is the page's, block for block.
 * Slow (a build and a pack, shared with the other files that install the
 * tarball; npm installs from the npm cache when it holds them).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packedTarball } from './support/packed-tarball.ts';
import { lineIndependentChecksRunHere } from './support/ci-lines.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const guide = readFileSync(join(root, 'docs/getting-started.md'), 'utf8');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
/** The repository's @types/node, so the install comes from the npm cache. */
const TYPES_NODE = (
  JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }
).devDependencies['@types/node']!;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeoutMs = 180_000): Promise<Outcome> {
  return new Promise((done) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The page's fenced blocks of one language, in order. */
function blocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

/** The quick start's files: each `ts` block whose first line names its file (`// tools/shout.ts — ...`). */
function quickStartFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const block of blocks(guide, 'ts')) {
    const name = /^\/\/ (\S+\.ts) —/.exec(block)?.[1];
    if (name) files.set(name, block);
  }
  return files;
}

/** Node runs a `.ts` file as it is from 22.18 on the 22 line and from 23.6. */
function runsTypeScript(): boolean {
  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  return major > 23 || (major === 23 && minor >= 6) || (major === 22 && minor >= 18);
}

/** The declarations a file reaches through its relative imports, as paths under `dist`. */
function declarationGraph(dist: string, entries: string[]): string[] {
  const seen = new Set<string>();
  const stack = entries.map((entry) => join(dist, entry));
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(/(?:from\s+|import\()\s*['"](\.[^'"]+)['"]/g)) {
      const target = resolve(dirname(file), match[1]!).replace(/\.(js|ts)$/, '.d.ts');
      if (existsSync(target)) stack.push(target);
    }
  }
  return [...seen].map((file) => relative(dist, file)).sort();
}

const files = quickStartFiles();
const [setup] = blocks(guide, 'sh');
let parent: string;
let project: string;

beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), 'toolpool-first-hour-'));
  // The tree's tarball, packed once for every test file and run that installs it.
  const tarball = await packedTarball();
  // The quick start's commands as written, but for where toolpool comes from.
  const script = setup!.replace(
    /^npm install toolpool /m,
    `npm install --no-audit --no-fund --prefer-offline ${tarball} `,
  );
  expect(script).not.toBe(setup);
  const ran = await run('bash', ['-euo', 'pipefail', '-c', script], parent, 300_000);
  expect(ran.code, ran.stderr).toBe(0);
  project = join(parent, /^mkdir (\S+)/.exec(setup!)![1]!);
  for (const [name, text] of files) {
    await mkdir(dirname(join(project, name)), { recursive: true });
    await writeFile(join(project, name), text);
  }
}, 600_000);

afterAll(async () => {
  if (parent) await rm(parent, { recursive: true, force: true });
});

describe('the quick start, run as written in a fresh npm init -y project', { timeout: 300_000 }, () => {
  test("the page has the setup, the tool and the host; the README's quick start is the same, block for block", () => {
    expect(setup).toMatch(
      /^mkdir my-agent && cd my-agent\nnpm init -y\nnpm pkg set type=module\nnpm install toolpool @sinclair\/typebox\n/,
    );
    expect([...files.keys()]).toEqual(['tools/shout.ts', 'host.ts']);
    for (const block of [setup!, ...files.values(), 'node host.ts\n', 'npm install -D tsx\nnpx tsx host.ts\n'])
      expect(readme).toContain(`\n${block}\`\`\``);
  });

  test('npm init -y wrote a CommonJS package; the quick start made it a module', async () => {
    const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8')) as { type?: string };
    expect(manifest.type).toBe('module');
  });

  test.skipIf(!runsTypeScript())(
    'node host.ts runs it (Node 22.18+ and 23.6+ run TypeScript as it is; older lines skip this)',
    async () => {
      const ran = await run(process.execPath, ['host.ts'], project, 120_000);
      expect(ran.stdout).toBe('HELLO HELLO HELLO\n');
      expect(ran.code, ran.stderr).toBe(0);
    },
  );

  test("npx tsx host.ts runs it (the page's way for Node 20)", async () => {
    const installed = await run(
      'npm',
      ['install', '-D', '--no-audit', '--no-fund', '--prefer-offline', 'tsx'],
      project,
    );
    expect(installed.code, installed.stderr).toBe(0);
    const ran = await run('npx', ['tsx', 'host.ts'], project, 120_000);
    expect(ran.stdout).toBe('HELLO HELLO HELLO\n');
    expect(ran.code, ran.stderr).toBe(0);
  });
});

// tsc's answers do not depend on the Node line: CI asks them on one line (support/ci-lines.ts).
describe.skipIf(!lineIndependentChecksRunHere)('types where users are', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    const installed = await run(
      'npm',
      ['install', '-D', '--no-audit', '--no-fund', '--prefer-offline', `@types/node@${TYPES_NODE}`],
      project,
    );
    expect(installed.code, installed.stderr).toBe(0);
    // The page's tsconfig.json: strict, no "types", skipLibCheck left off.
    const [tsconfig] = blocks(guide, 'json');
    expect(JSON.parse(tsconfig!).compilerOptions).not.toHaveProperty('types');
    expect(JSON.parse(tsconfig!).compilerOptions).not.toHaveProperty('skipLibCheck');
    await writeFile(join(project, 'tsconfig.json'), tsconfig!);
    // Every public name of the main entry, so all its declarations are checked, not only those the quick start uses.
    await writeFile(
      join(project, 'everything.ts'),
      "import * as toolpool from 'toolpool';\nexport const names: string[] = Object.keys(toolpool);\n",
    );
  }, 300_000);

  test.each([
    ['7', 'node_modules/typescript-7/bin/tsc'],
    ['5.9', 'node_modules/typescript/bin/tsc'],
  ])('the project type-checks with TypeScript %s', async (_version, tsc) => {
    const checked = await run(process.execPath, [join(root, tsc), '-p', project], project, 240_000);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  });

  test('the public declarations reach no internal module (tiers, child launchers, environments, the registry, the pool)', () => {
    const dist = join(project, 'node_modules/toolpool/dist');
    const { exports } = JSON.parse(readFileSync(join(project, 'node_modules/toolpool/package.json'), 'utf8')) as {
      exports: Record<string, { types?: string }>;
    };
    const entries = Object.values(exports).flatMap((entry) =>
      typeof entry === 'object' && entry.types ? [relative('./dist', entry.types)] : [],
    );
    expect(entries).toContain(join('src', 'index.d.ts'));
    const reached = declarationGraph(dist, entries);
    expect(
      reached.filter((file) =>
        /^src\/(isolation\/(?!permissions\.d\.ts)|domains\/|pool\/|registry\.d\.ts|validation\.d\.ts)/.test(file),
      ),
    ).toEqual([]);
    // Each entry names the Node types it needs: TypeScript 7 loads @types/node only when something references it.
    for (const entry of entries)
      expect(readFileSync(join(dist, entry), 'utf8'), entry).toMatch(/^\/\/\/ <reference types="node"/);
  });
});
