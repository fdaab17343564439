import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

const LF = 10;
const CR = 13;

/**
 * The SDK's fetch for a Streamable HTTP server, with what the server sends
 * bounded as a stdio server's lines are: a response body (a JSON answer) or
 * one server-sent event (the bytes between blank lines of a
 * `text/event-stream`) longer than `maxMessageBytes` errors the stream
 * before more is buffered, instead of the SDK reading it whole into the
 * host's memory. `onTooLong` hears why, once per response.
 */
export function boundedFetch(maxMessageBytes: number, onTooLong: (problem: string) => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const events = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const bounded = response.body.pipeThrough(messageBound(maxMessageBytes, events, onTooLong));
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function messageBound(maxBytes: number, events: boolean, onTooLong: (problem: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let size = 0; // bytes of the message (the body, or the current event) read so far
  let lineStart = true; // the last byte ended a line: a second line end in a row ends an event
  return new TransformStream({
    transform(chunk, controller) {
      if (!events) size += chunk.byteLength;
      else {
        for (const byte of chunk) {
          if (byte === CR) continue;
          if (byte === LF) {
            if (lineStart) size = 0;
            lineStart = true;
            continue;
          }
          lineStart = false;
          size++;
        }
      }
      if (size > maxBytes) {
        const problem = `sent a message longer than ${maxBytes} bytes`;
        onTooLong(problem);
        controller.error(new Error(`the server ${problem}`));
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
