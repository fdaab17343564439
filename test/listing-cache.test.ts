import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, test } from 'vitest';
import { createExecutor, type Executor } from '../src/executor/executor.ts';
import { plantListing, plantedInfo } from './support/listings.ts';
import { root, serveOverStdio } from './support/mcp-serve.ts';

// `toolpool serve` lists module tools from the listing cache (keyed by the
// module's content hash) before their workers have read them; each call of
// such a tool waits for its own worker's describe, whose answer is what runs.
// The modules here are new files with a unique nonce, so their cache keys are
// this run's own, whatever the shared cache already holds.

const folder = await mkdtemp(join(tmpdir(), 'toolpool-listing-'));
const nonce = `${process.pid}-${Date.now()}`;
afterAll(() => rm(folder, { recursive: true, force: true }));

const open: Executor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((executor) => executor.close()));
});

async function start(tools: string[], listFromCache = true): Promise<Executor> {
  const executor = await createExecutor({ tools, workers: { loadTimeoutMs: 60_000 } }, { listFromCache });
  open.push(executor);
  return executor;
}

/** A tool module whose top level waits while `gate` exists: its worker cannot describe it until the test says so. */
async function gatedModule(name: string, description: string): Promise<{ file: string; gate: string }> {
  const file = join(folder, `${name}.mjs`);
  const gate = join(folder, `${name}.gate`);
  await writeFile(
    file,
    [
      "import { existsSync } from 'node:fs';",
      `// ${nonce}`,
      `while (existsSync(${JSON.stringify(gate)})) await new Promise((resolve) => setTimeout(resolve, 20));`,
      'export default {',
      `  name: ${JSON.stringify(name)},`,
      `  description: ${JSON.stringify(description)},`,
      "  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },",
      "  execute: ({ text }) => ({ content: [{ type: 'text', text: 'got ' + text }] }),",
      '};',
      '',
    ].join('\n'),
  );
  return { file, gate };
}

const call = (name: string, args: Record<string, unknown>) => ({ id: 'c1', name, arguments: args });
const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe('listing from the cache', () => {
  test('a module listed before is listed while its top level still blocks; its call waits for its worker', async () => {
    const { file, gate } = await gatedModule('gated', 'Gated tool.');
    // First start: no listing yet, so the worker describes it (the gate is open) and the listing is stored.
    await (await start([file])).close();
    await writeFile(gate, '');
    try {
      const executor = await start([file]);
      // Listed although no worker could have read the module: its top level is still waiting for the gate
      // (without the listing, createExecutor would wait for it, past this test's timeout).
      expect(executor.definitions).toEqual([
        { name: 'gated', description: 'Gated tool.', parameters: expect.objectContaining({ required: ['text'] }) },
      ]);
      let settled = false;
      const batch = executor.executeBatch([call('gated', { text: 'a' })]).finally(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);
      await rm(gate);
      const { results } = await batch;
      expect(results[0]!.isError).toBe(false);
      expect(text(results[0]!)).toBe('got a');
    } finally {
      await rm(gate, { force: true });
    }
  });

  test('a listed tool that needs approval says so before its worker has read it (serve asks the client by it)', async () => {
    const { file, gate } = await gatedModule('approving', 'Needs a person.');
    await writeFile(
      file,
      (await readFile(file, 'utf8')).replace('export default {', 'export default {\n  needsApproval: true,'),
    );
    await (await start([file])).close();
    await writeFile(gate, '');
    try {
      const executor = await start([file]);
      // The worker is still held at the gate: this is the cached word, which must not say "never".
      expect(executor.metadata.get('approving')?.needsApproval).toBe('always');
    } finally {
      await rm(gate, { force: true });
    }
  });

  test('a module changed after its listing was stored is listed anew', async () => {
    const { file } = await gatedModule('changing', 'First version.');
    expect((await start([file])).definitions[0]!.description).toBe('First version.');
    await gatedModule('changing', 'Second version.');
    const executor = await start([file]);
    expect(executor.definitions[0]!.description).toBe('Second version.');
    const { results } = await executor.executeBatch([call('changing', { text: 'b' })]);
    expect(text(results[0]!)).toBe('got b');
  });

  test('an invalid module still fails with its own error, also the second time', async () => {
    const file = join(folder, 'invalid.mjs');
    await writeFile(file, `// ${nonce}\nexport default { name: 'invalid', description: 42, execute() {} };\n`);
    const expected = await createExecutor({ tools: [file] }).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(expected).toMatch(/invalid\.mjs is invalid/);
    for (let attempt = 0; attempt < 2; attempt++) await expect(start([file])).rejects.toThrow(expected!);
  });
});

describe('a poisoned listing (the cache is a folder tools without permissions could write)', () => {
  test('is only listed: a call is validated and run as the worker describes the module', async () => {
    const { file } = await gatedModule('poisoned', 'Real description.');
    await (await start([file])).close();
    // The listing says the tool takes any object; the module requires `text`.
    await plantListing(file, { ...plantedInfo, name: 'poisoned' });
    const executor = await start([file]);
    expect(executor.definitions[0]!.description).toBe('Poisoned description.');
    const { results } = await executor.executeBatch([call('poisoned', {})]);
    expect(results[0]!.isError).toBe(true);
    expect(text(results[0]!)).toMatch(/text/);
    // Once confirmed, the listing is the worker's.
    expect(executor.definitions[0]!.description).toBe('Real description.');
  });

  test('that names another tool: its calls fail saying so, and nothing runs under the listed name', async () => {
    const { file } = await gatedModule('renamed', 'Real tool.');
    await (await start([file])).close();
    await plantListing(file, { ...plantedInfo, name: 'impostor' });
    const executor = await start([file]);
    expect(executor.definitions.map((definition) => definition.name)).toEqual(['impostor']);
    const { results } = await executor.executeBatch([call('impostor', { text: 'x' })]);
    expect(results[0]!.isError).toBe(true);
    expect(text(results[0]!)).toMatch(/listed as "impostor".*another tool/);
  });

  test('that does not pass the host check is not used: the module is described anew', async () => {
    const { file } = await gatedModule('malformed', 'Real.');
    await (await start([file])).close();
    await plantListing(file, { ...plantedInfo, name: 'malformed', parameters: 'not a schema' });
    const executor = await start([file]);
    expect(executor.definitions[0]!.description).toBe('Real.');
  });
});

describe('toolpool serve', () => {
  test('answers tools/list while the module is still blocked at its top level', async () => {
    const { file, gate } = await gatedModule('served', 'Served tool.');
    // Described once as serve describes it (it gives each module the options { root: its working folder }).
    const first = await createExecutor(
      { tools: [{ module: file, options: { root: resolve(root) } }] },
      { listFromCache: true },
    );
    await first.close();
    await writeFile(gate, '');
    const served = await serveOverStdio(['--tools', file]);
    try {
      // The gate is still there: no worker has read the module yet.
      const { tools } = await served.client.listTools();
      expect(tools.map((tool) => [tool.name, tool.description])).toEqual([['served', 'Served tool.']]);
      const calling = served.client.callTool({ name: 'served', arguments: { text: 's' } });
      await rm(gate);
      const result = (await calling) as { content: Array<{ text: string }> };
      expect(result.content[0]!.text).toBe('got s');
    } finally {
      await rm(gate, { force: true });
      await served.close();
    }
  });
});
