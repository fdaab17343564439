/**
 * Every MCP content type in tool results (text, image, audio, embedded
 * resources as text or bytes, resource links): checked like text and image
 * parts, carried through each tier, `serve` and the MCP client unchanged,
 * and given to the AI SDK as it takes them. A malformed part of each kind is
 * an error result in every tier (the host checks what a worker or child sent).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, test } from 'vitest';
import { toModelOutput } from '../src/adapters/ai-sdk/model-output.ts';
import { createMcpServer, serveOverHttp } from '../src/adapters/mcp/index.ts';
import { checkSandboxSupport } from '../src/isolation/sandbox/bwrap-support.ts';
import { partAsText, problemWithResult } from '../src/core/tool-result.ts';
import type { Isolation } from '../src/index.ts';
import everyType, { EVERY_TYPE } from './fixtures/content/every-type.ts';
import { call, fixture, useExecutors } from './support/executors.ts';

const MODULE = fixture('content/every-type.ts');
// The sandbox tier needs bubblewrap; without it (or where the kernel refuses it) its cases skip, saying why.
const sandboxMissing = await checkSandboxSupport().then(
  () => undefined,
  (error: unknown) => (error as Error).message,
);

describe('the shape check', () => {
  test('accepts each content type', () => {
    expect(problemWithResult({ content: EVERY_TYPE })).toBeUndefined();
  });

  test.each([
    [{ type: 'audio', data: 'AAAA' }, /content\[0\] is an audio part without string "data" \(base64\) and "mimeType"/],
    [
      { type: 'resource', resource: { uri: 'u', text: 'a', blob: 'AAAA' } },
      /either a string "text" or a string "blob" \(base64\), not both/,
    ],
    [{ type: 'resource', resource: { uri: 'u' } }, /either a string "text" or a string "blob"/],
    [{ type: 'resource', resource: { text: 'a' } }, /resource has no string "uri"/],
    [{ type: 'resource', resource: 'file:///x' }, /"resource" must be an object/],
    [{ type: 'resource', resource: { uri: 'u', text: 'a', mimeType: 3 } }, /"mimeType" that is not a string/],
    [{ type: 'resource_link', uri: 'u' }, /resource_link part without string "uri" and "name"/],
    [{ type: 'resource_link', uri: 'u', name: 'n', size: -1 }, /"size" is not a whole number of bytes/],
    [{ type: 'resource_link', uri: 'u', name: 'n', title: {} }, /"title" is not a string/],
    [
      { type: 'video', data: 'AAAA' },
      /unknown type "video"; use "text", "image", "audio", "resource" or "resource_link"/,
    ],
  ])('refuses %j', (part, problem) => {
    expect(problemWithResult({ content: [part] })).toMatch(problem);
  });

  test('partAsText says what a part was without its bytes', () => {
    expect(EVERY_TYPE.map(partAsText)).toEqual([
      'hello',
      '[image image/png, 8 bytes]',
      '[audio audio/wav, 12 bytes]',
      '[resource file:///notes.txt]\nthe notes',
      '[resource file:///report.pdf, application/pdf, 9 bytes]',
      '[resource link file:///big.csv (big.csv), text/csv]',
    ]);
  });
});

const TIERS: Array<[string, Isolation | 'inline', string | undefined]> = [
  ['inline (host thread)', 'inline', undefined],
  ['worker', 'worker', undefined],
  ['process', 'process', undefined],
  ['sandbox', 'sandbox', sandboxMissing],
];

describe.each(TIERS)('through the %s tier', (_name, tier, missing) => {
  const open = useExecutors();
  const executorFor = () =>
    tier === 'inline' ? open({ tools: [everyType] }) : open({ tools: [MODULE], isolation: tier });

  test.skipIf(missing !== undefined)(
    `every content type arrives unchanged${missing ? ` (skipped: ${missing})` : ''}`,
    async () => {
      const executor = await executorFor();
      const { results } = await executor.executeBatch([call('all', 'every_type')]);
      expect(results[0]).toMatchObject({ isError: false, content: EVERY_TYPE });
    },
  );

  test.skipIf(missing !== undefined)(
    'a malformed part of each kind is an error result naming what is wrong',
    async () => {
      const executor = await executorFor();
      const bad = ['audio', 'both', 'neither', 'link', 'size', 'video'];
      const { results } = await executor.executeBatch(bad.map((kind) => call(kind, 'every_type', { bad: kind })));
      for (const result of results) {
        expect(result.isError).toBe(true);
        expect(result.content[0]).toMatchObject({
          type: 'text',
          text: expect.stringMatching(/^Tool returned an invalid result: content\[0\] /),
        });
      }
    },
  );
});

describe('through MCP', () => {
  const open = useExecutors();

  test('serve gives each part to an SDK client as MCP content of the same type (the client checks them against its schema)', async () => {
    const executor = await open({ tools: [MODULE] });
    const server = createMcpServer(executor);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    expect(await client.callTool({ name: 'every_type', arguments: {} })).toEqual({
      content: EVERY_TYPE,
      isError: false,
    });
    await server.close();
  });

  test("the MCP client gives an upstream server's parts to the executor unchanged, and serve passes them on", async () => {
    const upstream = await open({ tools: [MODULE], isolation: 'process' });
    const host = await serveOverHttp(upstream, { port: 0 });
    try {
      const executor = await open({ mcpServers: { up: { url: host.url } } });
      const { results } = await executor.executeBatch([call('all', 'up_every_type')]);
      expect(results[0]).toMatchObject({ isError: false, content: EVERY_TYPE });
    } finally {
      await host.close();
    }
  });
});

describe('the AI SDK adapter', () => {
  test('images, audio and embedded bytes go as file parts with their media type; text resources and links as text', () => {
    expect(toModelOutput(EVERY_TYPE)).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'hello' },
        { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
        { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'UklGRiQAAABXQVZF' } },
        { type: 'text', text: '[resource file:///notes.txt]\nthe notes' },
        {
          type: 'file',
          mediaType: 'application/pdf',
          filename: 'file:///report.pdf',
          data: { type: 'data', data: 'JVBERi0xLjQK' },
        },
        { type: 'text', text: '[resource link file:///big.csv (big.csv), text/csv]' },
      ],
    });
  });
});
