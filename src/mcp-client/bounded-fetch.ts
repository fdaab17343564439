import type { FetchLike } from '@modelcontextprotocol/client';
import { McpErrors } from '../core/errors.ts';

const LF = 10;
const CR = 13;

/**
 * The SDK's fetch for a Streamable HTTP server, with what the server sends
 * bounded as a stdio server's lines are: a response body (a JSON answer) or
 * one server-sent event (the bytes between blank lines of a
 * `text/event-stream`) longer than `maxMessageBytes` errors the stream
 * before more is buffered, instead of the SDK reading it whole into the
 * host's memory. `onTooLong` hears why.
 */
export function boundedFetch(maxMessageBytes: number, onTooLong: (problem: string) => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const events = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const bounded = response.body.pipeThrough(
      messageBound(maxMessageBytes, events ? eventBytes() : bodyBytes(), onTooLong),
    );
    return new Response(bounded, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Counts a chunk into the message being read; returns that message's size so far. */
type MessageMeter = (chunk: Uint8Array) => number;

function bodyBytes(): MessageMeter {
  let size = 0;
  return (chunk) => (size += chunk.byteLength);
}

/**
 * The current event's bytes: an empty line ends an event, and SSE lines end
 * in LF, CR or CRLF (a CRLF counts as one line end).
 */
function eventBytes(): MessageMeter {
  let size = 0;
  let atLineStart = true;
  let afterCR = false;
  return (chunk) => {
    for (const byte of chunk) {
      const crlf = afterCR && byte === LF;
      afterCR = byte === CR;
      if (crlf) continue;
      if (byte === LF || byte === CR) {
        if (atLineStart) size = 0;
        atLineStart = true;
      } else {
        atLineStart = false;
        size++;
      }
    }
    return size;
  };
}

function messageBound(
  maxBytes: number,
  meter: MessageMeter,
  onTooLong: (problem: string) => void,
): TransformStream<Uint8Array, Uint8Array> {
  return new TransformStream({
    transform(chunk, controller) {
      if (meter(chunk) <= maxBytes) return controller.enqueue(chunk);
      const problem = McpErrors.messageTooLong(maxBytes);
      onTooLong(problem);
      controller.error(new Error(`the server ${problem}`));
    },
  });
}
