/**
 * Every TypeScript block of README.md and docs/*.md is type-checked, in one
 * tsc run against toolpool's sources (`toolpool` and its subpaths resolve to
 * src/ as `exports` maps them). A block that quotes a `// #region` of an
 * `*.examples.ts` file as it is counts as that file, which is checked in the
 * same run (and run by the examples tests). Shell, JSON and text blocks are
 * not code to check; a TypeScript block marked `ts nocheck: <reason>` is
 * left out and must say why.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { codeBlocks, docPages, docsRoot, type CodeBlock } from '../support/docs-pages.ts';
import { lineIndependentChecksRunHere } from '../support/ci-lines.ts';

const TYPESCRIPT = new Set(['ts', 'typescript', 'mts']);
const NOT_CODE = new Set(['sh', 'json', 'text']);

/** `toolpool` and its subpaths, as package.json `exports` maps them, pointed at the sources. */
const ENTRIES: Record<string, string> = {
  toolpool: 'src/index.ts',
  'toolpool/openai': 'src/models/openai.ts',
  'toolpool/anthropic': 'src/models/anthropic.ts',
  'toolpool/mcp': 'src/adapters/mcp/index.ts',
  'toolpool/ai-sdk': 'src/adapters/ai-sdk/index.ts',
  'toolpool/bullmq': 'src/adapters/bullmq/index.ts',
};

/** Free names the short fragments use, as a reader would have them in scope. */
const GLOBALS = `import type { Model, ToolCall, ToolDefinition, ToolEntry } from 'toolpool';
declare global {
  /** The calls a model asked for. */
  const calls: ToolCall[];
  /** A model, as the agent page makes one. */
  const model: Model;
  /** The tools of a createExecutor call. */
  const tools: ToolEntry[];
  /** A tool definition, spread into defineTool with one option changed. */
  const definition: ToolDefinition;
  /** The host's own database. */
  const db: { get(id: string): Promise<unknown> };
}
export {};
`;

/** What a fragment without imports may use. */
const PRELUDE = `import { Type } from '@sinclair/typebox';
import { Agent, createExecutor, defineTool, scriptedModel } from 'toolpool';
void [Type, Agent, createExecutor, defineTool, scriptedModel];
`;

/** Every `*.examples.ts` file of src/ and the regions the docs quote from it, as a page shows them. */
function exampleRegions(): { files: string[]; regions: Set<string> } {
  const files: string[] = [];
  const regions = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(docsRoot, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.examples.ts')) files.push(path);
    }
  };
  walk('src');
  for (const file of files) {
    const source = readFileSync(join(docsRoot, file), 'utf8');
    for (const [, name, body] of source.matchAll(/\/\/ #region (\S+)\n([\s\S]*?)\n?\s*\/\/ #endregion/g)) {
      const lines = body!.split('\n');
      const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
      let text = lines.map((l) => l.slice(indent)).join('\n');
      // An adapter's examples import the package by relative path; the docs show the package name.
      if (name === 'readme')
        text = text
          .replaceAll("'../../index.ts'", "'toolpool'")
          .replace(/'\.\/index\.ts'/g, `'toolpool/${file.split('/')[2]}'`);
      regions.add(text.trimEnd());
    }
  }
  return { files, regions };
}

const pages = docPages();
const blocks = pages.flatMap(codeBlocks);
const { files: exampleFiles, regions } = exampleRegions();
const where = (block: CodeBlock) => `${block.page}:${block.line}`;

describe('the code blocks of README.md and docs/', () => {
  test('every block names its language, and a TypeScript block left unchecked says why', () => {
    const unnamed = blocks.filter((b) => !TYPESCRIPT.has(b.lang) && !NOT_CODE.has(b.lang)).map(where);
    expect(unnamed, 'a block needs ```ts, ```sh, ```json or ```text').toEqual([]);
    const noReason = blocks
      .filter((b) => TYPESCRIPT.has(b.lang) && /^nocheck\b/.test(b.info) && !/^nocheck:?\s*\S{3,}/.test(b.info))
      .map(where);
    expect(noReason, 'a ```ts nocheck block needs a reason after nocheck').toEqual([]);
  });

  const scratch = join(docsRoot, 'scratch');
  mkdirSync(scratch, { recursive: true });
  const dir = mkdtempSync(join(scratch, 'docs-blocks-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // tsc's answer does not depend on the Node line: CI asks it on one line (support/ci-lines.ts).
  test.skipIf(!lineIndependentChecksRunHere)(
    'every TypeScript block type-checks (one tsc run for all of them)',
    () => {
      const checked = blocks.filter((b) => TYPESCRIPT.has(b.lang) && !b.info.startsWith('nocheck'));
      const quoted = checked.filter((b) => regions.has(b.code.trimEnd()));
      const own = checked.filter((b) => !regions.has(b.code.trimEnd()));
      // Enough blocks that a broken extraction cannot pass unnoticed.
      expect(checked.length).toBeGreaterThan(20);
      expect(quoted.length).toBeGreaterThan(5);

      const names = own.map((block, i) => {
        const name = `${block.page.replace(/\W+/g, '-')}-${block.line}-${i}.ts`;
        const header = `// ${where(block)}\n`;
        const code = /^\s*import\s/m.test(block.code) ? block.code : PRELUDE + block.code;
        writeFileSync(join(dir, name), `${header}${code}\nexport {};\n`);
        return name;
      });
      writeFileSync(join(dir, 'globals.d.ts'), GLOBALS);
      // The canary: a block with a type error. tsc must report it, or nothing here is checked.
      writeFileSync(
        join(dir, 'canary.ts'),
        "import { defineTool } from 'toolpool';\nexport const wrong: number = defineTool;\n",
      );
      const paths = Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, [join(docsRoot, file)]]));
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          allowImportingTsExtensions: true,
          resolveJsonModule: true,
          paths,
        },
        files: [...names, 'globals.d.ts', 'canary.ts', ...exampleFiles.map((file) => join(docsRoot, file))],
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const run = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json'), '--pretty', 'false'], {
        encoding: 'utf8',
        cwd: dir,
      });
      const errors = `${run.stdout}${run.stderr}`.split('\n').filter((line) => /error TS\d+/.test(line));
      expect(
        errors.filter((line) => line.startsWith('canary.ts')),
        'the canary must fail',
      ).toHaveLength(1);
      // Each error line starts with the block's file, whose first line names the page and line it came from.
      const named = errors
        .filter((line) => !line.startsWith('canary.ts'))
        .map((line) => {
          const file = /^([^(]+)\(/.exec(line)?.[1];
          const origin = file && names.includes(file) ? readFileSync(join(dir, file), 'utf8').split('\n')[0] : '';
          return `${origin} ${line}`;
        });
      expect(named).toEqual([]);
    },
    600_000,
  );
});
