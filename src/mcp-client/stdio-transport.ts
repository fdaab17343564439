import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { McpErrors } from '../core/errors.ts';
import type { ServerProcess } from './server-process.ts';

/**
 * MCP's stdio transport over a server process toolpool started: one JSON
 * message per line each way. Instead of the SDK's StdioClientTransport,
 * which starts the process itself (no process group, inherited stderr,
 * HOME and PATH passed on, no exit code), it runs over ServerProcess.
 *
 * What the server writes is untrusted: a line longer than `maxLineBytes`
 * is not buffered (the server is reported as broken and killed); a line
 * that is not JSON, or not a JSON-RPC message, is dropped, as the SDK's
 * transport does (some servers log to stdout).
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #closed = false;
  /** It broke the framing: nothing more it sends is read. */
  #broken = false;

  constructor(
    private readonly server: ServerProcess,
    private readonly maxLineBytes: number,
    /** Told when the server broke the framing; the caller kills it. */
    private readonly onBroken: (problem: string) => void,
  ) {}

  async start(): Promise<void> {
    this.server.stdin.on('error', () => undefined); // EPIPE from a server that exited: its end is reported by `ended`
    this.server.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
    void this.server.ended.then(() => this.#close());
  }

  send(message: JSONRPCMessage): Promise<void> {
    const { stdin } = this.server;
    if (this.#closed || !stdin.writable) return Promise.reject(new Error('the MCP server is not running'));
    return new Promise((resolve) => {
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server's stdin; the server process's owner decides when to kill it. `onclose` follows its end. */
  async close(): Promise<void> {
    this.server.stdin.end();
  }

  #read(chunk: Buffer): void {
    if (this.#broken) return;
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.#pending.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.#pending).toString('utf8');
      this.#pending = [];
      this.#pendingBytes = 0;
      start = newline + 1;
      this.#deliver(line);
      if (this.#closed || this.#broken) return;
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  #keep(part: Buffer): void {
    this.#pendingBytes += part.length;
    if (this.#pendingBytes > this.maxLineBytes) return this.#break();
    this.#pending.push(part);
  }

  #break(): void {
    this.#broken = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.onBroken(McpErrors.messageTooLong(this.maxLineBytes));
  }

  #deliver(line: string): void {
    if (line.length > this.maxLineBytes) return this.#break();
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (text.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return; // not JSON: a log line on stdout
    }
    if (!isJsonRpc(message)) return;
    this.onmessage?.(message);
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

/** The envelope every JSON-RPC 2.0 message has; the SDK checks the rest of each message itself. */
function isJsonRpc(value: unknown): value is JSONRPCMessage {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { jsonrpc?: unknown }).jsonrpc === '2.0'
  );
}
