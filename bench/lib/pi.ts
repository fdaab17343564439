/**
 * The peer, pi-agent-core: its own agent loop (`runAgentLoop`) with a
 * scripted model, running tools in process. It moved to
 * `@earendil-works/pi-agent-core` 1.x, which needs Node 22.19+; on older
 * lines (Node 20) the last release under the old name,
 * `@mariozechner/pi-agent-core` 0.73, is the peer. Both harnesses measure
 * the same span (see pi-0.73.ts) with the same two tools.
 */
import type { ToolCall } from '../../src/tool.ts';

export interface SpanHooks {
  /** Runs just before the span's clock starts (e.g. start an event-loop watch). */
  before?: () => Promise<unknown> | unknown;
  /** Runs just after the span's clock stops. */
  after?: () => Promise<unknown> | unknown;
}

export interface PiBatch {
  /** The tool step's wall time in ns. */
  ns: number;
  /** The tool results the loop made, in its own message shape. */
  results: unknown[];
}

/** One agent-loop run per batch: what every pi harness offers. */
export interface PiRunner {
  batch(calls: ToolCall[], hooks?: SpanHooks): Promise<PiBatch>;
}

/** The trivial tool (bench/tools/noop.ts) or the CPU-heavy one (tools/hash.ts), as pi tools. */
export type PiTool = 'noop' | 'hash';

export interface PiPeer {
  /** How reports name it, e.g. "@earendil-works/pi-agent-core 1.6.0". */
  readonly name: string;
  harness(tools: readonly PiTool[]): PiRunner;
}

/** `@earendil-works/pi-agent-core` declares engines node >=22.19.0. */
export function newPiRuns(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 19);
}

/** The package of the peer on this Node line. */
export function piPackage(): string {
  return newPiRuns() ? '@earendil-works/pi-agent-core' : '@mariozechner/pi-agent-core';
}

let peer: Promise<PiPeer> | undefined;

/** The pi-agent-core this Node line runs, loaded once. */
export function piPeer(): Promise<PiPeer> {
  return (peer ??= newPiRuns() ? import('./pi-1.ts').then((m) => m.peer) : import('./pi-0.73.ts').then((m) => m.peer));
}
