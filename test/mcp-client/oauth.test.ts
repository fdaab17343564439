/**
 * A URL server behind OAuth: createExecutor({ mcpServers: { s: { url, authProvider } } })
 * hands the SDK's OAuthClientProvider to its Streamable HTTP transport. The
 * server here is a local one protected as the specification says (401 with
 * the protected resource's metadata, an authorization server with a token
 * endpoint); the provider is the SDK's own ClientCredentialsProvider, and a
 * counting wrapper shows the tokens were fetched and used.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createExecutor } from '../../src/index.ts';
import { textOf } from '../support/executors.ts';

const TOKEN = 'token-for-toolpool';
let http: HttpServer;
let base: string;
const seen = { unauthorized: 0, tokenRequests: 0, authorized: 0 };

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function body(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

function mcpServer(): Server {
  const server = new Server({ name: 'protected', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'whoami', description: 'Says who called', inputSchema: { type: 'object', properties: {} } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, (_request, extra) => ({
    content: [{ type: 'text', text: `hello ${extra.authInfo?.clientId ?? 'client with a valid token'}` }],
  }));
  return server;
}

beforeAll(async () => {
  http = createServer(async (req, res) => {
    const path = new URL(req.url!, base).pathname;
    if (path.startsWith('/.well-known/oauth-protected-resource'))
      return json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
    if (path === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    if (path === '/token') {
      const form = new URLSearchParams(await body(req));
      const basic = req.headers.authorization?.startsWith('Basic ')
        ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString()
        : `${form.get('client_id')}:${form.get('client_secret')}`;
      if (form.get('grant_type') !== 'client_credentials' || basic !== 'toolpool:s3cret')
        return json(res, 401, { error: 'invalid_client' });
      seen.tokenRequests++;
      return json(res, 200, { access_token: TOKEN, token_type: 'Bearer', expires_in: 3600 });
    }
    if (path !== '/mcp') return json(res, 404, {});
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      seen.unauthorized++;
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` },
      );
    }
    seen.authorized++;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = mcpServer();
    res.on('close', () => void server.close());
    await server.connect(transport);
    const text = req.method === 'POST' ? await body(req) : '';
    await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

test('a URL server behind OAuth is reached with authProvider: the token is fetched, then sent', async () => {
  const authProvider = new ClientCredentialsProvider({
    clientId: 'toolpool',
    clientSecret: 's3cret',
    expectedIssuer: base,
  });
  const executor = await createExecutor({ mcpServers: { p: { url: `${base}/mcp`, authProvider } } });
  try {
    expect(executor.definitions.map((definition) => definition.name)).toEqual(['p_whoami']);
    const { results } = await executor.executeBatch([{ id: 'c1', name: 'p_whoami', arguments: {} }]);
    expect(results[0]!.isError).toBe(false);
    expect(textOf(results[0]!)).toBe('hello client with a valid token');
    expect(seen.unauthorized).toBeGreaterThan(0);
    expect(seen.tokenRequests).toBe(1);
    expect(seen.authorized).toBeGreaterThan(0);
  } finally {
    await executor.close();
  }
});

test('without authProvider the same server refuses toolpool at start', async () => {
  await expect(createExecutor({ mcpServers: { p: { url: `${base}/mcp` } } })).rejects.toThrow(/401|Unauthorized|auth/i);
});

test('authProvider must look like an OAuthClientProvider', async () => {
  await expect(
    createExecutor({ mcpServers: { p: { url: `${base}/mcp`, authProvider: { tokens: 'x' } as never } } }),
  ).rejects.toThrow(/authProvider.tokens must be a function/);
});
