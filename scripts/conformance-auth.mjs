// `npm run conformance:auth`: the MCP conformance suite's 21 authorization client scenarios (all but
// auth/cross-app-access-complete-flow, which needs RFC 8693 token exchange, an SDK client extension toolpool does not offer)
// against createExecutor({ mcpServers: { s: { url, authProvider } } }), through the test OAuth client in
// test/fixtures/conformance-client/oauth-client.mts. One scenario at a time (about 5 s each); `-- <scenario>...` runs only those.
// test/adapters/mcp-conformance.test.ts runs a few of them on every test run. Needs Node 22+, like the suite.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
];

/**
 * Scenarios expected to fail, with why: the run fails when one of them passes, so the list cannot go stale.
 * The 2025-03-26 metadata back-compat server serves its authorization server metadata at the root well-known path
 * with an `issuer` of `<origin>/oauth`; RFC 8414 §3.3 says that issuer must be the origin, and the MCP SDK v2's
 * client (which toolpool's MCP client is) refuses such metadata, as a defence against authorization server mix-up.
 */
const EXPECTED_FAILURES = new Set(['auth/2025-03-26-oauth-metadata-backcompat']);

if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(`conformance:auth needs Node 22 or newer (the suite's own dependencies); this is ${process.version}`);
  process.exit(1);
}

const root = new URL('../', import.meta.url);
const cli = fileURLToPath(new URL('node_modules/@modelcontextprotocol/conformance/dist/index.js', root));
const tsx = pathToFileURL(fileURLToPath(new URL('node_modules/tsx/dist/loader.mjs', root))).href;
const client = `"${process.execPath}" --import ${tsx} "${fileURLToPath(new URL('test/fixtures/conformance-client/oauth-client.mts', root))}"`;

function run(scenario, cwd) {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [cli, 'client', '--command', client, '--scenario', scenario, '--timeout', '120000'],
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const asked = process.argv.slice(2);
const scenarios = asked.length > 0 ? asked : AUTH_SCENARIOS;
const results = mkdtempSync(join(tmpdir(), 'toolpool-conformance-auth-'));
const started = Date.now();
const failed = [];
const expected = [];
try {
  for (const scenario of scenarios) {
    const { code, output } = await run(scenario, results);
    const summary = output.match(/Passed: \d+\/\d+, \d+ failed, \d+ warnings/)?.[0] ?? 'no summary';
    const ok = code === 0 && /Passed: (\d+)\/\1, 0 failed, 0 warnings/.test(output);
    const expectedToFail = EXPECTED_FAILURES.has(scenario);
    console.log(`${ok ? 'pass' : expectedToFail ? 'fail (expected)' : 'FAIL'}  ${scenario}  ${summary}`);
    if (ok === expectedToFail) {
      failed.push(scenario);
      console.log(ok ? `${scenario} passes now: take it off EXPECTED_FAILURES` : output);
    } else if (!ok) expected.push(scenario);
  }
} finally {
  rmSync(results, { recursive: true, force: true });
}
const seconds = ((Date.now() - started) / 1000).toFixed(0);
const passed = scenarios.length - failed.length - expected.length;
console.log(`${passed} of ${scenarios.length} passed, ${expected.length} failed as expected, in ${seconds} s`);
if (failed.length > 0) process.exit(1);
