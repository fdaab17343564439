import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { approvalExample, signedSnapshotExample } from '../src/examples/agent.examples.ts';
import { folderExample, toolLimitsExample, trustDomainExample } from '../src/examples/executor.examples.ts';
import { createExecutor, scriptedModel } from '../src/index.ts';
import { schemaExamples } from '../src/examples/tool.examples.ts';
import { textOf } from '../src/core/messages.ts';
import { mcpServersExample } from '../src/examples/mcp-client.examples.ts';
import { MCP_FIXTURES, MCP_SERVER, startHttpMcpServer } from './support/mcp-servers.ts';
import { allDocsText } from './support/docs-pages.ts';

// README.md and docs/*.md: the examples moved to the docs pages.
const readme = allDocsText();
const examples = readFileSync(new URL('../src/examples/agent.examples.ts', import.meta.url), 'utf8');
const toolExamples = readFileSync(new URL('../src/examples/tool.examples.ts', import.meta.url), 'utf8');
const executorExamples = readFileSync(new URL('../src/examples/executor.examples.ts', import.meta.url), 'utf8');
const mcpClientExamples = readFileSync(new URL('../src/examples/mcp-client.examples.ts', import.meta.url), 'utf8');

/** The lines between `// #region name` and `// #endregion`, unindented as the README shows them. */
function region(source: string, name: string): string {
  const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)\\n\\s*// #endregion`).exec(source);
  if (!match) throw new Error(`no region ${name}`);
  const lines = match[1]!.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('README examples', () => {
  test('the snapshotSecret and trustDomain examples in the README are those in the examples files', () => {
    expect(readme).toContain(region(examples, 'snapshot-secret'));
    expect(readme).toContain(region(executorExamples, 'trust-domain'));
  });

  test('the snapshotSecret example: a signed snapshot is restored, a changed one refused', async () => {
    const executor = await createExecutor({ tools: [] });
    try {
      const refused = signedSnapshotExample(scriptedModel([]), executor, new Map(), 'a host secret');
      expect(refused).toMatch(/snapshot failed its integrity check/);
    } finally {
      await executor.close();
    }
  });

  test('the trustDomain example: the two pack modules share a worker, the third does not', async () => {
    const domain = (name: string) => new URL(`./fixtures/domains/${name}.ts`, import.meta.url).pathname;
    const executor = await trustDomainExample(domain('module-a'), domain('module-b'), domain('module-c'));
    try {
      // One call after the other: a domain's pool then runs them on the one worker it keeps.
      const threads: number[] = [];
      for (const name of ['a', 'b', 'c']) {
        const { results } = await executor.executeBatch([{ id: name, name: `domain_${name}`, arguments: {} }]);
        threads.push((results[0]!.details as { threadId: number }).threadId);
      }
      expect(threads[0]).toBe(threads[1]);
      expect(threads[2]).not.toBe(threads[0]);
    } finally {
      await executor.close();
    }
  });

  test('the approval example in the README is the one in src/examples/agent.examples.ts', () => {
    expect(readme).toContain(region(examples, 'approval'));
  });

  test('the approval example pauses, survives as JSON and resumes', async () => {
    const logged: unknown[][] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args));
    const model = scriptedModel([
      { toolCalls: [{ id: 'rent', name: 'transfer', arguments: { to: 'ACME', amount: 900 } }] },
      (request) => ({ text: `Done: ${textOf(request.messages.at(-1) as never)}` }),
    ]);
    const store = new Map<string, string>();
    const messages = await approvalExample(model, store);
    expect(logged).toEqual([['needs approval:', 'transfer', { to: 'ACME', amount: 900 }]]);
    expect(JSON.parse(store.get('run-42')!)).toMatchObject({
      version: 3,
      approval: { pending: [{ toolCallId: 'rent' }] },
    });
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(textOf(messages.at(-1) as never)).toBe('Done: Sent 900 to ACME.');
  });
});

describe('README examples of schemas, toolLimits, folders and await using', () => {
  test.each([
    [toolExamples, 'zod'],
    [toolExamples, 'valibot-arktype'],
    [executorExamples, 'tool-limits'],
    [executorExamples, 'folder'],
  ])('the README quotes region %#', (source, name) => {
    expect(readme).toContain(`\`\`\`ts\n${region(source, name)}\n\`\`\``);
  });

  test('the schema examples run: transforms and defaults applied, JSON Schema shown', async () => {
    const executor = await createExecutor({ tools: schemaExamples() });
    try {
      expect(executor.definitions.find((d) => d.name === 'weather')!.parameters).toMatchObject({
        properties: {
          city: { type: 'string', minLength: 1 },
          unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' },
        },
      });
      const { results } = await executor.executeBatch([
        { id: '1', name: 'weather', arguments: { city: ' Oslo ' } },
        { id: '2', name: 'weather_v', arguments: { city: 'Rome' } },
        { id: '3', name: 'weather_a', arguments: { city: 'Lima', days: '3' } },
        { id: '4', name: 'weather_a', arguments: { city: 'Lima', days: 9 } },
      ]);
      expect(results.slice(0, 3).map((r) => textOf(r as never))).toEqual([
        'Oslo: 21 degrees celsius',
        'Rome: sunny',
        'Lima: sunny for 3 day(s)',
      ]);
      expect(results[3]!.isError).toBe(true);
    } finally {
      await executor.close();
    }
  });

  test('the toolLimits example gives its tool 5 minutes', async () => {
    const executor = await toolLimitsExample();
    try {
      const { results } = await executor.executeBatch([
        { id: '1', name: 'crawl_site', arguments: { url: 'https://example.com' } },
      ]);
      expect(textOf(results[0] as never)).toBe('crawled https://example.com');
    } finally {
      await executor.close();
    }
  });

  test('the folder example loads ./tools and closes the executor with await using', async () => {
    const batch = await folderExample();
    expect(textOf(batch.results[0] as never)).toBe('6 * 7 = 42');
  });
});

describe('README example of MCP servers', () => {
  test('the README quotes it', () => {
    expect(readme).toContain(`\`\`\`ts\n${region(mcpClientExamples, 'mcp-servers')}\n\`\`\``);
  });

  test('it runs: a sandboxed stdio server and an HTTP server, their tools named SERVER_tool', async () => {
    const search = await startHttpMcpServer();
    const executor = await mcpServersExample({
      notesServer: MCP_SERVER,
      notesFiles: [MCP_FIXTURES, new URL('../node_modules', import.meta.url).pathname],
      searchUrl: search.url,
    });
    try {
      const names = executor.definitions.map((definition) => definition.name);
      expect(names).toEqual(expect.arrayContaining(['notes_echo', 'search_echo']));
      expect(executor.metadata.get('notes_echo')?.needsApproval).toBe('function');
      const { results } = await executor.executeBatch([
        { id: '1', name: 'notes_env', arguments: {} },
        { id: '2', name: 'search_echo', arguments: { text: 'found' } },
      ]);
      // Its env, and PWD (its working folder), which bubblewrap sets.
      const { PWD: _pwd, ...env } = JSON.parse(textOf(results[0] as never)) as Record<string, string>;
      expect(env).toEqual({ NOTES_DIR: '/srv/notes' });
      expect(textOf(results[1] as never)).toBe('found');
    } finally {
      await executor.close();
      await search.close();
    }
  });
});
