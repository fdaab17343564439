/**
 * What a Streamable HTTP server sends is bounded while it streams: a JSON
 * body as a whole, an event stream per event. A server on 127.0.0.1 sends
 * the bytes as given; SSE lines may end in LF, CR or CRLF.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { boundedFetch } from '../../src/mcp-client/bounded-fetch.ts';

const BOUND = 16 * 1024;
const bodies = new Map<string, { type: string; body: string }>();
const event = (bytes: number, end: string) => `data: ${'x'.repeat(bytes)}${end}${end}`;
bodies.set('/lf', { type: 'text/event-stream', body: Array.from({ length: 200 }, () => event(1024, '\n')).join('') });
bodies.set('/cr', { type: 'text/event-stream', body: Array.from({ length: 200 }, () => event(1024, '\r')).join('') });
bodies.set('/crlf', {
  type: 'text/event-stream',
  body: Array.from({ length: 200 }, () => event(1024, '\r\n')).join(''),
});
bodies.set('/big-event', { type: 'text/event-stream', body: event(1024, '\n') + event(4 * BOUND, '\n') });
bodies.set('/small-json', { type: 'application/json', body: JSON.stringify({ text: 'x'.repeat(BOUND / 2) }) });
bodies.set('/big-json', { type: 'application/json', body: JSON.stringify({ text: 'x'.repeat(4 * BOUND) }) });

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    const { type, body } = bodies.get(request.url ?? '')!;
    response.writeHead(200, { 'content-type': type });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function read(path: string): Promise<{ text?: string; error?: string; problems: string[] }> {
  const problems: string[] = [];
  const response = await boundedFetch(BOUND, (problem) => problems.push(problem))(`${base}${path}`);
  try {
    return { text: await response.text(), problems };
  } catch (error) {
    return { error: (error as Error).message, problems };
  }
}

describe('boundedFetch', () => {
  test.each(['/lf', '/cr', '/crlf'])(
    '%s: many small events, far more than the bound in all, are read whole',
    async (path) => {
      const { text, problems } = await read(path);
      expect(problems).toEqual([]);
      expect(text).toBe(bodies.get(path)!.body);
    },
  );

  test('one event past the bound errors the stream and says why', async () => {
    const { error, problems } = await read('/big-event');
    expect(problems).toEqual([`sent a message longer than ${BOUND} bytes`]);
    expect(error).toMatch(/sent a message longer than 16384 bytes/);
  });

  test('a JSON body is bounded as a whole', async () => {
    expect((await read('/small-json')).problems).toEqual([]);
    const big = await read('/big-json');
    expect(big.problems).toEqual([`sent a message longer than ${BOUND} bytes`]);
    expect(big.text).toBeUndefined();
  });
});
