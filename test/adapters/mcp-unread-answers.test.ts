/**
 * An HTTP client of `serve` that stops reading its answer stream must not
 * grow the host without bound or hold its call forever
 * (src/adapters/mcp/unread-answers.ts): past 16 MiB waiting for the client
 * the response is dropped, and a 2026-07-28 call aborts with its request.
 * Before, every progress notification of a flooding tool was kept in the
 * host's memory for as long as the call ran.
 */
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setImmediate as tick } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { serveOverHttp, type McpHttpHost } from '../../src/adapters/mcp/index.ts';
import { dropWhenUnread } from '../../src/adapters/mcp/unread-answers.ts';
import { createExecutor, defineTool, type Executor } from '../../src/index.ts';
import { deferred } from '../support/executors.ts';

const UPDATES = 1_000;
const PART = 'x'.repeat(64 * 1024);
let flooded = deferred<{ sent: number; aborted: boolean }>();
/** 1,000 progress notifications of 64 KiB each (64 MiB), unless its signal stops it first. */
const flood = defineTool({
  name: 'flood',
  description: 'Sends big progress updates',
  parameters: Type.Object({}),
  execute: async (_args, ctx) => {
    let sent = 0;
    while (sent < UPDATES && !ctx.signal.aborted) {
      ctx.onUpdate({ content: [{ type: 'text', text: PART }] });
      sent++;
      await tick();
    }
    flooded.resolve({ sent, aborted: ctx.signal.aborted });
    return { content: [{ type: 'text', text: `sent ${sent}` }] };
  },
});

let executor: Executor;
let host: McpHttpHost;
beforeAll(async () => {
  executor = await createExecutor({ tools: [flood], limits: { timeoutMs: 120_000 } });
  host = await serveOverHttp(executor, { port: 0 });
});
afterAll(async () => {
  await host?.close();
  await executor?.close();
});

/** Answers nobody reads, kept referenced: a collected undici body would close its socket and look like a gone client. */
const unread: Response[] = [];
/** A fetch whose tools/call answers are never read: their bodies are handed over as streams nobody pulls from. */
const neverReads: typeof fetch = async (input, init) => {
  if (typeof init?.body !== 'string' || !init.body.includes('"tools/call"')) return fetch(input, init);
  // Without the client's signal: the test ends this request itself (below), by cancelling the body.
  const answer = await fetch(input, { ...init, signal: null });
  unread.push(answer);
  return new Response(new ReadableStream({ pull: () => new Promise(() => undefined) }), {
    status: answer.status,
    headers: answer.headers,
  });
};

describe('an HTTP client that stops reading', () => {
  test('a 2026-07-28 call is aborted once 16 MiB wait for the client, not kept going with everything buffered', async () => {
    flooded = deferred();
    const client = new Client(
      { name: 'stalled', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(host.url), { fetch: neverReads }));
    const call = client
      .callTool({ name: 'flood', arguments: {} }, { onprogress: () => undefined })
      .catch(() => undefined);
    try {
      const outcome = await flooded.promise;
      expect(outcome.aborted).toBe(true);
      // Kernel buffers and the 16 MiB bound let a few hundred 64 KiB updates through; never the whole 64 MiB.
      expect(outcome.sent).toBeLessThan(UPDATES);
    } finally {
      // The SDK's close aborts the fetch it still has going, and reports that abort as its own failure.
      await client.close().catch(() => undefined);
      await Promise.all(unread.splice(0).map((answer) => answer.body?.cancel()));
      await call;
    }
  }, 120_000);
});

describe('dropWhenUnread', () => {
  function fakeResponse(accepts: boolean) {
    const response = Object.assign(new EventEmitter(), {
      writableLength: 0,
      destroy: vi.fn(),
      write(chunk: string) {
        response.writableLength += chunk.length;
        return accepts;
      },
    });
    dropWhenUnread(response as unknown as ServerResponse, { maxUnsentBytes: 100, maxStalledMs: 1_000 });
    return response;
  }

  test('past maxUnsentBytes waiting, the response is destroyed at once', () => {
    const response = fakeResponse(true);
    response.write('x'.repeat(100));
    expect(response.destroy).not.toHaveBeenCalled();
    response.write('x');
    expect(response.destroy).toHaveBeenCalledOnce();
  });

  test('a socket full for maxStalledMs destroys the response; a drain in time keeps it', () => {
    vi.useFakeTimers();
    try {
      const drained = fakeResponse(false);
      drained.write('x');
      vi.advanceTimersByTime(900);
      drained.emit('drain');
      vi.advanceTimersByTime(1_000);
      expect(drained.destroy).not.toHaveBeenCalled();

      const stuck = fakeResponse(false);
      stuck.write('x');
      vi.advanceTimersByTime(1_001);
      expect(stuck.destroy).toHaveBeenCalledOnce();
    } finally {
      vi.useRealTimers();
    }
  });
});
