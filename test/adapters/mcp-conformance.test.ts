/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance)
 * against `serveOverHttp` (what `toolpool serve --http` runs), offline on
 * 127.0.0.1: its server scenarios in toolpool's scope (lifecycle, tools,
 * elicitation from a tool, the Streamable HTTP transport), with the tool
 * modules each scenario asks for in test/fixtures/conformance/. Scenarios
 * expected to fail go in that folder's baseline.yml (none today): the suite
 * fails this test when a listed one passes, so the list cannot go stale. Its client
 * scenarios drive `createExecutor({ mcpServers })` (test/fixtures/conformance-client/client.mts, outside the tool folder) against
 * the suite's own servers.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serveOverHttp, type McpHttpHost } from '../../src/adapters/mcp/index.ts';
import { createExecutor, type Executor } from '../../src/index.ts';
import { fixture } from '../support/executors.ts';

// The suite's own dependencies (undici 7, express 5, the SDK's newest client) are run on Node 22+ only; on Node 20 it is skipped.
const tooOld = Number(process.versions.node.split('.')[0]) < 22;
const CLI = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);

const PASSING = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-error',
  'tools-call-with-progress',
  'json-schema-2020-12',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
];

function conformance(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(tooOld)('the MCP conformance suite against serveOverHttp', () => {
  let executor: Executor;
  let host: McpHttpHost;
  let results: string;

  beforeAll(async () => {
    executor = await createExecutor({ tools: [fixture('conformance')] });
    host = await serveOverHttp(executor, { port: 0 });
    results = mkdtempSync(join(tmpdir(), 'toolpool-conformance-'));
  }, 120_000);

  afterAll(async () => {
    await host?.close();
    await executor?.close();
    if (results) rmSync(results, { recursive: true, force: true });
  });

  test.each(PASSING)(
    '%s passes',
    async (scenario) => {
      const { code, output } = await conformance(
        [
          'server',
          '--url',
          host.url,
          '--scenario',
          scenario,
          '--expected-failures',
          fixture('conformance/baseline.yml'),
        ],
        results,
      );
      expect(output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
      expect(code).toBe(0);
    },
    120_000,
  );
});

const TSX = pathToFileURL(fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url))).href;
const CLIENT = `"${process.execPath}" --import ${TSX} "${fixture('conformance-client/client.mts')}"`;

/** Runs each client scenario against `command` (a client under test, built on createExecutor) and expects every check to pass. */
function clientScenarios(title: string, command: string, scenarios: string[]): void {
  describe.skipIf(tooOld)(title, () => {
    let results: string;
    beforeAll(() => void (results = mkdtempSync(join(tmpdir(), 'toolpool-conformance-client-'))));
    afterAll(() => rmSync(results, { recursive: true, force: true }));

    test.each(scenarios)(
      '%s passes',
      async (scenario) => {
        const { code, output } = await conformance(
          ['client', '--command', command, '--scenario', scenario, '--timeout', '120000'],
          results,
        );
        expect(output).toMatch(/Passed: (\d+)\/\1, 0 failed/);
        expect(code).toBe(0);
      },
      180_000,
    );
  });
}

clientScenarios('the MCP conformance suite against createExecutor({ mcpServers })', CLIENT, [
  'initialize',
  'tools_call',
  'sse-retry',
  'elicitation-sep1034-client-defaults',
]);

const OAUTH_CLIENT = `"${process.execPath}" --import ${TSX} "${fixture('conformance-client/oauth-client.mts')}"`;

// Authorization: createExecutor with a URL server's authProvider (a test OAuthClientProvider, as the SDK's conformance client
// writes one; the SDK's own client-credentials providers for that extension). A few of the suite's 21 auth scenarios, one per
// kind (metadata discovery at a place only WWW-Authenticate names, client ID metadata documents, scopes, token endpoint
// authentication, a pre-registered client, client credentials with a signed JWT), to keep the run short (about 5 s each):
// `npm run conformance:auth` runs all 21.
clientScenarios(
  'the MCP conformance suite: authorization, against createExecutor({ mcpServers: { s: { url, authProvider } } })',
  OAUTH_CLIENT,
  [
    'auth/metadata-var3',
    'auth/basic-cimd',
    'auth/scope-step-up',
    'auth/token-endpoint-auth-post',
    'auth/pre-registration',
    'auth/client-credentials-jwt',
  ],
);
