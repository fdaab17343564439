import { ToolpoolTypeError } from './error-codes.ts';
import * as crypto from 'node:crypto';
import { hostname } from 'node:os';
import { canonicalJson } from './canonical-json.ts';
import type { ToolResult } from './tool.ts';

/**
 * A ledger remembers, across processes and machines, which keyed tool
 * calls started and how they ended, so a call runs at most once: a call
 * whose key ended gets its recorded result back, a call whose key started
 * and never ended is not run again (it may have run). A call is keyed by
 * the batch's `runId` and the call's id; a batch without a `runId` is not
 * recorded.
 *
 * Four methods, so a ledger can live in any store with an atomic
 * "insert if absent" (Postgres `INSERT ... ON CONFLICT DO NOTHING`,
 * DynamoDB `attribute_not_exists`, Redis `SET NX`). Each method either
 * does what it says or throws; a ledger that throws runs nothing (the
 * call gets an error result naming the ledger).
 */
export interface Ledger {
  /** Named in error results, e.g. `sqliteLedger(./calls.db)`. */
  readonly name: string;
  /**
   * Records that a call starts, atomically and only if nothing is recorded
   * under its key: returns `undefined` when this record was written (the
   * caller may run the call), or the record already there (written by this
   * or another process, started or ended). Must be durable when it returns.
   */
  claim(key: LedgerKey, record: StartRecord): Promise<LedgerRecord | undefined>;
  /** Records how a call this process claimed ended (its record becomes `ended`). */
  end(key: LedgerKey, end: EndRecord): Promise<void>;
  /**
   * Removes a claim this process made for a call that never ran (aborted or
   * closed before it reached its tool), so a retry may run it.
   */
  release(key: LedgerKey): Promise<void>;
  /** Closes the store's connection, if the ledger opened one. */
  close?(): Promise<void>;
}

/** A call's key: the batch's run id and the call's id. */
export interface LedgerKey {
  runId: string;
  callId: string;
}

/** What is recorded when a call starts. */
export interface StartRecord {
  toolName: string;
  /** sha256 of the call's validated arguments (canonical JSON): a reused call id with other arguments is not the same call. */
  argsDigest: string;
  /** When it started, in ms since the epoch. */
  startedAt: number;
  /** Where it started: `hostname:pid`. */
  startedBy: string;
}

/** How a call ended, as recorded. */
export interface EndRecord {
  endedAt: number;
  isError: boolean;
  /** The result, when its JSON fits the ledger's bound; otherwise `omitted`. */
  result?: ToolResult;
  /** A result over the bound: its size and digest, not the result. */
  omitted?: { bytes: number; sha256: string };
}

/** A record as a ledger holds it: started, and ended once `end` is there. */
export interface LedgerRecord extends StartRecord {
  end?: EndRecord;
}

/** Results larger than this (as JSON) are recorded as a digest and a note: 256 KiB. */
export const DEFAULT_MAX_RECORDED_BYTES = 256 * 1024;

const HOST = `${hostname()}:${process.pid}`;

/** Where this process is, as a ledger records it. */
export function thisHost(): string {
  return HOST;
}

/** One-shot hashing (Node 20.12+) costs a third of a Hash object's on a small input: it runs twice per keyed call. */
const sha256Hex: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

export function argsDigest(args: Record<string, unknown>): string {
  return sha256Hex(canonicalJson(args));
}

/** The end record of a result: the result itself within `maxBytes` of JSON, else its size and digest. */
export function endRecord(result: ToolResult, isError: boolean, maxBytes = DEFAULT_MAX_RECORDED_BYTES): EndRecord {
  const kept: ToolResult = { content: result.content };
  if (result.details !== undefined) kept.details = result.details;
  if (result.terminate !== undefined) kept.terminate = result.terminate;
  let json: string;
  try {
    json = JSON.stringify(kept);
  } catch {
    json = '';
  }
  const bytes = Buffer.byteLength(json);
  if (json !== '' && bytes <= maxBytes) return { endedAt: Date.now(), isError, result: JSON.parse(json) as ToolResult };
  return { endedAt: Date.now(), isError, omitted: { bytes, sha256: sha256Hex(json) } };
}

/** Checks what a ledger store gave back, so a damaged row reads as "no usable record" rather than a crash. */
export function readRecord(value: unknown): LedgerRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<LedgerRecord>;
  if (
    typeof record.toolName !== 'string' ||
    typeof record.argsDigest !== 'string' ||
    typeof record.startedAt !== 'number' ||
    typeof record.startedBy !== 'string'
  )
    return undefined;
  const read: LedgerRecord = {
    toolName: record.toolName,
    argsDigest: record.argsDigest,
    startedAt: record.startedAt,
    startedBy: record.startedBy,
  };
  const end = record.end as Partial<EndRecord> | undefined;
  if (end && typeof end === 'object' && typeof end.endedAt === 'number' && typeof end.isError === 'boolean') {
    const ended: EndRecord = { endedAt: end.endedAt, isError: end.isError };
    const result = end.result as Partial<ToolResult> | undefined;
    if (result && typeof result === 'object' && Array.isArray(result.content)) ended.result = result as ToolResult;
    else if (end.omitted && typeof end.omitted.bytes === 'number' && typeof end.omitted.sha256 === 'string')
      ended.omitted = { bytes: end.omitted.bytes, sha256: end.omitted.sha256 };
    else ended.omitted = { bytes: 0, sha256: '' };
    read.end = ended;
  }
  return read;
}

export interface MemoryLedgerOptions {
  /** Keys kept at most (default 100 000); the oldest ended ones go first, and a replay of a forgotten key runs it again. */
  maxKeys?: number;
}

/**
 * The default ledger: a map in this process. A replayed snapshot, a second
 * resume or a retried batch in this executor is answered from it; across
 * processes it holds nothing (use `sqliteLedger` on one machine,
 * `redisLedger` from `toolpool/bullmq` across machines).
 */
export function memoryLedger(options: MemoryLedgerOptions = {}): Ledger {
  const maxKeys = options.maxKeys ?? 100_000;
  if (!(Number.isInteger(maxKeys) && maxKeys >= 1))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      `memoryLedger: maxKeys must be an integer >= 1, got ${String(options.maxKeys)}`,
    );
  const records = new Map<string, LedgerRecord>();
  // Ended keys, oldest end first: the ones eviction may forget. A started key never ends up here, so it is never forgotten.
  const ended = new KeyQueue();
  // The run id's length first: no two keys give one string.
  const id = (key: LedgerKey) => `${key.runId.length}:${key.runId}:${key.callId}`;
  // O(1) per call: a scan of the map from its start would walk every started key and every deleted slot before it.
  const evict = () => {
    while (records.size > maxKeys) {
      const name = ended.shift();
      if (name === undefined) return;
      if (records.get(name)?.end) records.delete(name);
    }
  };
  return {
    name: 'memoryLedger()',
    async claim(key, record) {
      const name = id(key);
      const existing = records.get(name);
      // A copy, so what the caller does with a replayed result does not change the record.
      if (existing) return structuredClone(existing);
      records.set(name, { ...record });
      evict();
      return undefined;
    },
    async end(key, end) {
      const name = id(key);
      const record = records.get(name);
      if (!record) return;
      if (!record.end) ended.push(name);
      // Kept as given: the executor hands over an end record of its own (endRecord's fresh copy of the result).
      record.end = end;
    },
    async release(key) {
      const record = records.get(id(key));
      if (record && !record.end) records.delete(id(key));
    },
  };
}

/** A first-in first-out queue of keys with O(1) shift (Array.prototype.shift moves every element). */
class KeyQueue {
  #items: string[] = [];
  #head = 0;

  push(name: string): void {
    this.#items.push(name);
  }

  shift(): string | undefined {
    if (this.#head === this.#items.length) return undefined;
    const name = this.#items[this.#head++];
    // Drop the consumed front once it is most of the array, so memory follows the live part.
    if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return name;
  }
}

/** Checks a `ledger` option: an object with the four methods. */
export function ledgerProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null)
    return 'must be a ledger (memoryLedger(), sqliteLedger(path), redisLedger(...) or your own { name, claim, end, release })';
  const ledger = value as Partial<Ledger>;
  if (typeof ledger.name !== 'string') return 'must have a name (a string)';
  for (const method of ['claim', 'end', 'release'] as const)
    if (typeof ledger[method] !== 'function') return `must have a ${method}() method`;
  return undefined;
}
