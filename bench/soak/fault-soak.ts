/**
 * The fault soak: seeded, reproducible batches of calls over the worker,
 * process and sandbox tiers, each call a plain success or one injected
 * fault, each checked against its one true outcome (the exact value, or
 * the error code and text of the injected cause). Counts wrong and lost
 * calls, checks that a flood's last update arrived before its `tool_end`,
 * samples the host's heap and RSS, times `close()` and checks that nothing
 * (child process, thread) is left after it.
 *
 *   npx tsx bench/soak/fault-soak.ts --calls 20000 --seed 1 [--tiers worker,process,sandbox] [--max-seconds N]
 *
 * The plan (every batch, its calls, sizes and concurrency) follows from the
 * seed; how the calls interleave at run time does not, so a seed finds a
 * race often, not always. Exits 1 on any wrong or lost call, growth or leftover.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createExecutor, type Executor, type ToolEvent } from '../../src/index.ts';
import type { ToolCall, ToolResultMessage } from '../../src/core/tool.ts';
import { seeded } from '../lib/seeded.ts';

export type Tier = 'worker' | 'process' | 'sandbox';
export const TIERS: readonly Tier[] = ['worker', 'process', 'sandbox'];

/** What a soak call does; `abort` calls wait for their batch's signal, which fires mid-call. */
export type Kind =
  | 'ok'
  | 'slow-ok'
  | 'throw'
  | 'reject'
  | 'exit'
  | 'timer'
  | 'busy'
  | 'heap'
  | 'abort'
  | 'import'
  | 'bad-args'
  | 'bad-json'
  | 'unknown'
  | 'duplicate'
  | 'flood'
  | 'huge';

/** Relative weights of the kinds in a plain batch (aborts come in batches of their own). */
const WEIGHTS: [Kind, number][] = [
  ['ok', 30],
  ['slow-ok', 8],
  ['throw', 6],
  ['reject', 6],
  ['exit', 3],
  ['timer', 2],
  ['busy', 1.5],
  ['heap', 1.5],
  ['import', 3],
  ['bad-args', 4],
  ['bad-json', 4],
  ['unknown', 4],
  ['duplicate', 3],
  ['flood', 6],
  ['huge', 3],
];

export const SOAK_LIMITS = { timeoutMs: 15_000, maxMemoryMb: 64, maxResultBytes: 64 * 1024, abortGraceMs: 500 };
/** A batch not settled after this long is lost (each of its calls counts). */
const BATCH_WATCHDOG_MS = 120_000;
/** A batch not settled after this long is reported (its calls, and whether each started and ended). */
const SLOW_BATCH_MS = 60_000;

const FAULT_TOOL = fileURLToPath(new URL('./tools/fault.ts', import.meta.url));
const SPIN_TOOL = fileURLToPath(new URL('./tools/spin.ts', import.meta.url));

export interface PlannedCall {
  kind: Kind;
  call: ToolCall;
  /** For floods: how many updates; for huge results: the size. */
  n: number;
}
export interface PlannedBatch {
  tier: Tier;
  calls: PlannedCall[];
  /** Abort the batch's signal this many ms after it started. */
  abortAfterMs?: number;
}
/** A phase runs its tiers' batches at once, each tier with `lanes` batches in flight. */
export interface Phase {
  lanes: Record<Tier, number>;
  batches: PlannedBatch[];
}

export interface Wrong {
  tier: Tier;
  kind: Kind;
  id: string;
  problem: string;
}

export interface SoakReport {
  seed: number;
  calls: number;
  tiers: Tier[];
  wrong: Wrong[];
  lost: number;
  seconds: number;
  callsPerSecond: number;
  heapMb: { start: number; end: number };
  rssMb: { start: number; end: number };
  closeMs: number;
  /** Descendant processes and threads above the start's count, after close. */
  leftProcesses: string[];
  /** Of leftProcesses, esbuild services (the host's module compiler stops its own when the last executor closes). */
  compilerService: number;
  leftThreads: number;
  /** How long after close() the last of them was gone (the whole window when something stayed). */
  goneAfterMs: number;
  /** Heap and RSS grew by less than the bounds below. */
  flat: boolean;
}

/** The whole run, from the seed: phases of batches, each call with its kind and arguments. */
export function plan(seed: number, calls: number, tiers: readonly Tier[], kinds?: readonly Kind[]): Phase[] {
  const random = seeded(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const weights = WEIGHTS.filter(([kind]) => !kinds || kinds.includes(kind));
  const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
  const kindOf = (): Kind => {
    let roll = random() * total;
    for (const [kind, weight] of weights) if ((roll -= weight) < 0) return kind;
    return weights[weights.length - 1]![0];
  };
  let nextId = 0;
  const phases: Phase[] = [];
  let planned = 0;
  while (planned < calls) {
    const lanes = Object.fromEntries(TIERS.map((tier) => [tier, int(1, 4)])) as Record<Tier, number>;
    const batches: PlannedBatch[] = [];
    const phaseCalls = Math.min(calls - planned, int(200, 800));
    let inPhase = 0;
    while (inPhase < phaseCalls) {
      const tier = pick(tiers);
      const size = Math.min(phaseCalls - inPhase, int(1, 8));
      const batch: PlannedBatch = { tier, calls: [] };
      const aborting = (!kinds || kinds.includes('abort')) && random() < 0.05;
      if (aborting) batch.abortAfterMs = int(20, 300);
      for (let i = 0; i < size; i++) {
        const id = `${tier[0]}${nextId++}`;
        const tag = `${id}-${Math.floor(random() * 1e9).toString(36)}`;
        const kind: Kind = aborting ? 'abort' : kindOf();
        batch.calls.push(soakCall(kind, id, tag, batch.calls, int, random));
      }
      batches.push(batch);
      inPhase += size;
    }
    phases.push({ lanes, batches });
    planned += inPhase;
  }
  return phases;
}

function soakCall(
  kind: Kind,
  id: string,
  tag: string,
  earlier: PlannedCall[],
  int: (min: number, max: number) => number,
  random: () => number,
): PlannedCall {
  const fault = (faultKind: string, n = 0): PlannedCall => ({
    kind,
    n,
    call: { id, name: 'fault', arguments: { kind: faultKind, tag, n } },
  });
  switch (kind) {
    case 'slow-ok':
      return fault('slow-ok', int(1, 60));
    case 'reject':
      return fault('reject', int(0, 5));
    case 'abort':
      return fault('wait');
    case 'busy':
      return { kind, n: 0, call: { id, name: 'spin', arguments: { tag } } };
    case 'bad-args':
      // No tag: the schema requires one.
      return { kind, n: 0, call: { id, name: 'fault', arguments: { kind: 'ok', n: int(0, 99) } } };
    case 'bad-json':
      return { kind, n: 0, call: { id, name: 'fault', arguments: `{"kind": "ok", "tag": "${tag}"` } };
    case 'unknown':
      return { kind, n: 0, call: { id, name: `no_such_tool_${int(0, 9)}`, arguments: { tag } } };
    case 'duplicate': {
      // The id of an earlier call of this batch (itself a plain success if there is none).
      const first = earlier.find((planned) => planned.kind !== 'duplicate');
      if (!first) return { ...fault('ok'), kind: 'ok' };
      return { kind, n: 0, call: { id: first.call.id, name: 'fault', arguments: { kind: 'ok', tag } } };
    }
    case 'flood':
      // Mostly within the update window's pace, sometimes far past it (coalesced: the last must still arrive).
      return fault('flood', random() < 0.1 ? int(20_000, 60_000) : int(50, 3_000));
    case 'huge':
      return fault('huge', SOAK_LIMITS.maxResultBytes + int(1, 200_000));
    default:
      return fault(kind);
  }
}

/** What the events said about one call id. */
interface Seen {
  /** A tool_start was seen for the id. */
  started?: boolean;
  lastUpdate: number;
  /** The last update's number when the first tool_end for the id arrived. */
  lastAtEnd?: number;
  updatesAfterEnd: number;
}

const textOf = (result: ToolResultMessage) =>
  result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('');

/** Says what is wrong with a call's result, or undefined when it is its one true outcome. */
export function checkOutcome(
  planned: PlannedCall,
  result: ToolResultMessage | undefined,
  seen?: Seen,
): string | undefined {
  if (!result) return 'no result';
  const { call, kind } = planned;
  const args = call.arguments as { tag?: string };
  const tag = args.tag;
  const text = textOf(result);
  const failed = (code: string, matches: (text: string) => boolean) => {
    if (!result.isError || result.errorCode !== code || !matches(text))
      return `expected ${code}, got ${result.isError ? (result.errorCode ?? 'error') : 'success'}: ${text.slice(0, 200)}`;
    return undefined;
  };
  if (result.toolCallId !== call.id) return `result for ${result.toolCallId}, not ${call.id}`;
  switch (kind) {
    case 'ok':
    case 'slow-ok': {
      const n = (call.arguments as { n: number }).n;
      if (result.isError) return `expected success, got ${result.errorCode}: ${text.slice(0, 200)}`;
      if (text !== `ok ${tag}`) return `expected "ok ${tag}", got ${text.slice(0, 200)}`;
      const details = result.details as { tag?: unknown; n?: unknown } | undefined;
      if (details?.tag !== tag || details?.n !== n) return `wrong details ${JSON.stringify(details)}`;
      return undefined;
    }
    case 'throw':
      return failed('THREW', (t) => t === `soak throw ${tag}`);
    case 'reject':
      return failed('THREW', (t) => t === `soak reject ${tag}`);
    case 'timer':
      return failed('THREW', (t) => t === `soak timer ${tag}`);
    case 'exit':
      return failed('CRASHED', (t) => t.includes('exited with code 7'));
    case 'busy':
      return failed('TIMEOUT', (t) => t.includes('timeoutMs'));
    case 'heap':
      return failed('MEMORY_LIMIT', (t) => t.includes('maxMemoryMb'));
    case 'abort':
      return failed('ABORTED', (t) => t.includes('abort'));
    case 'import':
      return failed('THREW', (t) => t.includes('broken-import') || t.includes('cannot be imported'));
    case 'bad-args':
      return failed('INVALID_ARGUMENTS', (t) => t.includes('tag'));
    case 'bad-json':
      return failed('INVALID_ARGUMENTS', (t) => /JSON/i.test(t));
    case 'unknown':
      return failed('NOT_FOUND', (t) => t.includes(call.name));
    case 'duplicate':
      return failed('DUPLICATE_CALL_ID', (t) => t.includes(call.id));
    case 'huge':
      return failed('RESULT_TOO_LARGE', (t) => t.includes('maxResultBytes'));
    case 'flood': {
      const n = planned.n;
      if (result.isError) return `expected success, got ${result.errorCode}: ${text.slice(0, 200)}`;
      if (text !== `flood ${tag}`) return `expected "flood ${tag}", got ${text.slice(0, 200)}`;
      if (seen?.lastAtEnd !== n) return `its last update (${n}) had not arrived at tool_end (last: ${seen?.lastAtEnd})`;
      if (seen.updatesAfterEnd > 0) return `${seen.updatesAfterEnd} updates after tool_end`;
      return undefined;
    }
  }
}

export interface SoakOptions {
  seed: number;
  calls: number;
  tiers?: readonly Tier[];
  /** Only these kinds (default: all). */
  kinds?: readonly Kind[];
  /** Start no new batch after this many seconds (the report then counts the calls run). */
  maxSeconds?: number;
  log?: (line: string) => void;
}

/** Runs the soak; never throws for a wrong outcome, it reports it. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const tiers = [...(options.tiers ?? TIERS)];
  const log = options.log ?? (() => undefined);
  const phases = plan(options.seed, options.calls, tiers, options.kinds);
  await stat('.'); // libuv's thread pool starts with the first fs call, and stays: not a leftover
  const threadsAtStart = threadCount();
  // Processes of the runner's own (tsx's esbuild service) were there before any executor.
  const processesAtStart = new Set(descendants());
  const executors = new Map<Tier, Executor>();
  const seen = new Map<string, Seen>();
  const wrong: Wrong[] = [];
  let lost = 0;
  let done = 0;
  const slowest = new Map<string, number>();
  for (const tier of tiers) {
    const executor = await createExecutor({
      tools: [FAULT_TOOL, SPIN_TOOL],
      isolation: tier,
      limits: SOAK_LIMITS,
      workers: { min: 0, max: 3 },
    });
    executor.subscribe((event: ToolEvent) => record(seen, event));
    executors.set(tier, executor);
  }
  const started = performance.now();
  const overTime = () => options.maxSeconds !== undefined && performance.now() - started > options.maxSeconds * 1_000;
  let heapStart = 0;
  let rssStart = 0;
  for (const [index, phase] of phases.entries()) {
    await Promise.all(
      tiers.map(async (tier) => {
        const queue = phase.batches.filter((batch) => batch.tier === tier);
        const lane = async () => {
          for (let batch = queue.shift(); batch && !overTime(); batch = queue.shift()) {
            const batchStart = performance.now();
            const outcome = await runBatch(executors.get(tier)!, batch, seen, log);
            const ms = performance.now() - batchStart;
            const key = `${tier} ${[...new Set(batch.calls.map((c) => c.kind))].sort().join('+')}`;
            if (process.env.SOAK_TIMES) slowest.set(key, Math.max(slowest.get(key) ?? 0, Math.round(ms)));
            wrong.push(...outcome.wrong);
            for (const item of outcome.wrong) log(`WRONG ${item.tier} ${item.kind} ${item.id}: ${item.problem}`);
            lost += outcome.lost;
            done += batch.calls.length;
          }
        };
        await Promise.all(Array.from({ length: phase.lanes[tier] }, lane));
      }),
    );
    if (index === 0) [heapStart, rssStart] = memoryMb();
    if (index % 2 === 1 || index === phases.length - 1 || overTime()) {
      const [heap, rss] = memoryMb();
      log(`${done} calls, ${wrong.length} wrong, ${lost} lost, heap ${heap} MB, rss ${rss} MB`);
    }
    if (overTime()) break;
  }
  const seconds = (performance.now() - started) / 1000;
  if (process.env.SOAK_TIMES)
    log(
      [...slowest]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 30)
        .map(([k, v]) => `${v} ms ${k}`)
        .join('\n'),
    );
  const [heapEnd, rssEnd] = memoryMb();
  const closing = performance.now();
  await Promise.all([...executors.values()].map((executor) => executor.close()));
  const closeMs = Math.round(performance.now() - closing);
  const { processes, threads, compiler, waitedMs } = await leftovers(threadsAtStart, processesAtStart);
  return {
    seed: options.seed,
    calls: done,
    tiers,
    wrong,
    lost,
    seconds: Math.round(seconds * 10) / 10,
    callsPerSecond: Math.round(done / seconds),
    heapMb: { start: heapStart, end: heapEnd },
    rssMb: { start: rssStart, end: rssEnd },
    closeMs,
    leftProcesses: processes,
    compilerService: compiler.length,
    leftThreads: threads,
    goneAfterMs: waitedMs,
    flat: heapEnd - heapStart < 64 && rssEnd - rssStart < 256,
  };
}

function record(seen: Map<string, Seen>, event: ToolEvent): void {
  let entry = seen.get(event.toolCallId);
  if (!entry) seen.set(event.toolCallId, (entry = { lastUpdate: 0, updatesAfterEnd: 0 }));
  if (event.type === 'tool_start') entry.started = true;
  else if (event.type === 'tool_update') {
    if (entry.lastAtEnd !== undefined) entry.updatesAfterEnd++;
    const i = (event.partial.details as { i?: unknown } | undefined)?.i;
    if (typeof i === 'number') entry.lastUpdate = Math.max(entry.lastUpdate, i);
  } else if (event.type === 'tool_end') entry.lastAtEnd ??= entry.lastUpdate;
}

async function runBatch(
  executor: Executor,
  batch: PlannedBatch,
  seen: Map<string, Seen>,
  log: (line: string) => void,
): Promise<{ wrong: Wrong[]; lost: number }> {
  const abort = new AbortController();
  const abortTimer = batch.abortAfterMs === undefined ? undefined : setTimeout(() => abort.abort(), batch.abortAfterMs);
  let watchdog: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'lost'>((resolve) => (watchdog = setTimeout(() => resolve('lost'), BATCH_WATCHDOG_MS)));
  // A batch this slow is named, with where each of its calls got to, so a hang can be read before the watchdog.
  const slow = setTimeout(() => log(slowBatchReport(batch, seen)), SLOW_BATCH_MS);
  const running = executor.executeBatch(
    batch.calls.map((planned) => planned.call),
    { signal: abort.signal },
  );
  const settled = await Promise.race([
    running.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    timedOut,
  ]);
  clearTimeout(watchdog);
  clearTimeout(slow);
  clearTimeout(abortTimer);
  if (settled === 'lost') return { wrong: [], lost: batch.calls.length };
  if ('error' in settled) {
    const problem = `executeBatch threw: ${String(settled.error)}`;
    return { wrong: batch.calls.map(({ kind, call }) => ({ tier: batch.tier, kind, id: call.id, problem })), lost: 0 };
  }
  const { results } = settled.value;
  const wrong: Wrong[] = [];
  let lost = 0;
  for (const [index, planned] of batch.calls.entries()) {
    const result = results[index];
    if (!result) {
      lost++;
      continue;
    }
    const problem = checkOutcome(planned, result, seen.get(planned.call.id));
    if (problem) wrong.push({ tier: batch.tier, kind: planned.kind, id: planned.call.id, problem });
  }
  for (const planned of batch.calls) if (planned.kind !== 'duplicate') seen.delete(planned.call.id);
  return { wrong, lost };
}

function slowBatchReport(batch: PlannedBatch, seen: Map<string, Seen>): string {
  const calls = batch.calls.map(({ kind, call }) => {
    const entry = seen.get(call.id);
    const state = entry?.lastAtEnd !== undefined ? 'ended' : entry?.started ? 'started' : 'not started';
    return `${call.id} ${kind} ${state}`;
  });
  const abort = batch.abortAfterMs === undefined ? '' : `, aborted at ${batch.abortAfterMs} ms`;
  return `SLOW ${batch.tier} batch of ${batch.calls.length}${abort}, ${SLOW_BATCH_MS / 1000} s and not settled: ${calls.join('; ')}`;
}

function memoryMb(): [number, number] {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, rss } = process.memoryUsage();
  return [Math.round(heapUsed / 2 ** 20), Math.round(rss / 2 ** 20)];
}

function threadCount(): number {
  try {
    return Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Every process below this one (from /proc), or an empty list where there is no procfs. */
function descendants(): number[] {
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const task of safeList(`/proc/${pid}/task`)) {
      let children: string;
      try {
        children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(process.pid);
  return found;
}

/** A leftover as `ps` would show it: its command line, or (a zombie has none) its name, state and parent. */
function commandOf(pid: number): string {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').slice(0, 200);
    // stat: "pid (comm) state ppid ...": comm may hold spaces, so the rest is read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${command || `[${name}]`} (state ${state}, parent ${ppid})`;
  } catch {
    return '(gone)';
  }
}

function safeList(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

/**
 * What is left after close(): child processes and threads. They get up to 5 s to go: exit is asynchronous, and
 * esbuild's service is stopped 1 s after the last executor closed (a loaded machine took over the 1 s more that a
 * 2 s window left it to exit).
 */
const LEFTOVER_WINDOW_MS = 5_000;
/**
 * The soak runs under tsx, whose loader thread starts an esbuild service of its own when it first compiles a source
 * its cache lacks (a lazily loaded tier's module after an edit). On Node 22+ that service exits when the host's is
 * stopped (seen with esbuild's own build() and stop() under tsx, no toolpool involved), and stays a zombie until the
 * loader thread runs again: its loop, not the host's, reaps it. The host's service is reaped by the main thread's
 * loop, which runs while this waits, so an esbuild zombie is tsx's and not a leftover of the executors.
 */
const TSX_LOADER_ESBUILD = new RegExp(`^\\d+ \\[esbuild\\] \\(state Z, parent ${process.pid}\\)$`);
async function leftovers(
  threadsAtStart: number,
  processesAtStart: ReadonlySet<number>,
): Promise<{ processes: string[]; threads: number; compiler: string[]; waitedMs: number }> {
  for (let waited = 0; ; waited += 100) {
    // esbuild's service (the host's module compiler) is stopped when the last executor closes: one left counts, named as such.
    const processes = descendants()
      .filter((pid) => !processesAtStart.has(pid))
      .map((pid) => `${pid} ${commandOf(pid)}`);
    const compiler = processes.filter((line) => / --service=\S+ --ping/.test(line));
    const left = processes.filter((line) => !TSX_LOADER_ESBUILD.test(line));
    const threads = Math.max(0, threadCount() - threadsAtStart);
    if ((left.length === 0 && threads === 0) || waited >= LEFTOVER_WINDOW_MS)
      return { processes: left, threads, compiler, waitedMs: waited };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Text of a report: wrong by kind and tier, lost, calls/s, memory, close. */
export function summary(report: SoakReport): string {
  const byKind = new Map<string, number>();
  for (const { tier, kind } of report.wrong)
    byKind.set(`${kind} / ${tier}`, (byKind.get(`${kind} / ${tier}`) ?? 0) + 1);
  const lines = [
    `fault soak: seed ${report.seed}, ${report.calls} calls over ${report.tiers.join(', ')} in ${report.seconds} s (${report.callsPerSecond} calls/s)`,
    `wrong: ${report.wrong.length}${[...byKind].map(([key, count]) => `\n  ${key}: ${count}`).join('')}`,
    `lost: ${report.lost}`,
    `host heap: ${report.heapMb.start} → ${report.heapMb.end} MB; rss: ${report.rssMb.start} → ${report.rssMb.end} MB (${report.flat ? 'flat' : 'GREW'})`,
    `close(): ${report.closeMs} ms; left after it: ${report.leftProcesses.length} processes, ${report.leftThreads} threads` +
      ` (of which ${report.compilerService} esbuild service)` +
      (report.leftProcesses.length + report.leftThreads === 0
        ? `, the last gone ${report.goneAfterMs} ms after it`
        : `, still there ${report.goneAfterMs} ms after it`),
  ];
  for (const left of report.leftProcesses) lines.push(`  left: ${left}`);
  for (const item of report.wrong.slice(0, 40)) lines.push(`  ${item.tier} ${item.kind} ${item.id}: ${item.problem}`);
  return lines.join('\n');
}

export function passed(report: SoakReport): boolean {
  return (
    report.wrong.length === 0 &&
    report.lost === 0 &&
    report.flat &&
    report.leftProcesses.length === 0 &&
    report.leftThreads === 0
  );
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? undefined : process.argv[index + 1];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const report = await runSoak({
    seed: Number(argument('seed') ?? 1),
    calls: Number(argument('calls') ?? 2_000),
    tiers: (argument('tiers')?.split(',') as Tier[] | undefined) ?? TIERS,
    ...(argument('max-seconds') ? { maxSeconds: Number(argument('max-seconds')) } : {}),
    log: (line) => console.log(line),
  });
  console.log(summary(report));
  process.exitCode = passed(report) ? 0 : 1;
}
