/**
 * A user's project for the fresh-process cold-start case (18): three trivial
 * tool modules that import `toolpool` by name, as an installed user's do,
 * with `node_modules/toolpool` pointing at the build being measured, and the
 * same three tools as plain JavaScript for the raw piscina baseline.
 */
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const TOOLS = {
  echo: { parameters: 'Type.Object({ text: Type.String() })', args: '{ text }: { text: string }', text: 'text' },
  sum: {
    parameters: 'Type.Object({ a: Type.Number(), b: Type.Number() })',
    args: '{ a, b }: { a: number; b: number }',
    text: 'String(a + b)',
  },
  upper: {
    parameters: 'Type.Object({ text: Type.String() })',
    args: '{ text }: { text: string }',
    text: 'text.toUpperCase()',
  },
} as const;

export const COLD_TOOL_NAMES = Object.keys(TOOLS) as (keyof typeof TOOLS)[];

export interface ColdProject {
  root: string;
  /** The app that times the cold start (bench/children/cold-ready.mjs), run by plain node. */
  app: string;
  /** The TypeScript tool modules toolpool loads. */
  tsTools: string[];
  /** The same tools as JavaScript, for raw piscina's worker to import. */
  jsTools: string[];
}

function toolSource(name: keyof typeof TOOLS, typed: boolean): string {
  const tool = TOOLS[name];
  const args = typed ? tool.args : tool.args.split(':')[0]!;
  return [
    "import { Type } from '@sinclair/typebox';",
    "import { defineTool } from 'toolpool';",
    '',
    'export default defineTool({',
    `  name: '${name}',`,
    `  description: 'Cold-start tool ${name}.',`,
    `  parameters: ${tool.parameters},`,
    `  execute: (${args}) => ({ content: [{ type: 'text', text: ${tool.text} }] }),`,
    '});',
    '',
  ].join('\n');
}

/** Writes the project under `buildRoot` (the compiled toolpool's folder), which also becomes the `toolpool` package. */
export async function writeColdProject(buildRoot: string): Promise<ColdProject> {
  await writeFile(
    join(buildRoot, 'package.json'),
    JSON.stringify({ name: 'toolpool', type: 'module', exports: { '.': './src/index.js' } }, null, 2),
  );
  const root = join(buildRoot, 'cold-project');
  await mkdir(join(root, 'tools'), { recursive: true });
  await mkdir(join(root, 'node_modules'), { recursive: true });
  await symlink(buildRoot, join(root, 'node_modules', 'toolpool'), 'dir').catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'cold-project', type: 'module', private: true }));
  const tsTools: string[] = [];
  const jsTools: string[] = [];
  for (const name of COLD_TOOL_NAMES) {
    const ts = join(root, 'tools', `${name}.ts`);
    const js = join(root, `${name}.mjs`); // outside tools/, so `toolpool serve --tools tools` sees the three TS modules only
    await writeFile(ts, toolSource(name, true));
    await writeFile(js, toolSource(name, false));
    tsTools.push(ts);
    jsTools.push(js);
  }
  const app = join(root, 'cold-ready.mjs');
  await copyFile(fileURLToPath(new URL('../children/cold-ready.mjs', import.meta.url)), app);
  await copyFile(
    fileURLToPath(new URL('../raw/cold-raw-worker.mjs', import.meta.url)),
    join(root, 'cold-raw-worker.mjs'),
  );
  return { root, app, tsTools, jsTools };
}
