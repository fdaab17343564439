import { execFile } from 'node:child_process';

/**
 * The data segment Node itself takes in the process tier's child, measured
 * for the running Node binary instead of assumed: it differs per line (Node
 * 20 and 22 start at ~50-80 MB, Node 24 and 26 reserve ~560 MB for V8's code
 * range up front, and every worker thread adds its own). `prlimit --data`
 * counts all of it, so the child's cap is this plus `maxMemoryMb`.
 */
export interface NodeReservation {
  /** VmData of an idle Node process, in MB. */
  baseMb: number;
  /** What one more worker thread (with the pool's code range size) adds, in MB. */
  perWorkerMb: number;
}

/** The code range each worker of the child gets: Node 24+ would reserve 512 MB per worker by default. */
export const CHILD_CODE_RANGE_MB = 32;

/**
 * The young generation each worker of the child gets. Left to V8, a worker
 * whose old generation is capped at N MB still maps up to about 2N MB before
 * its heap limit trips (measured on Node 24: 130 MB more at 128 MB), so a
 * heap bomb reached the child's cap first and V8 aborted the whole child,
 * with every call in it. Bounded, a heap bomb maps at most the worker's
 * share, N MB and about this much more: the worker's limit trips first and
 * stops that call only.
 */
export const CHILD_YOUNG_GENERATION_MB = 16;

/**
 * What Node adds to a worker's heap limit once the limit is reached: its
 * near-heap-limit callback stops the worker and raises the limit by 16 MB
 * so the running GC can finish (`kExtraHeapAllowance` in node_worker.cc).
 * A heap bomb maps that too before its worker ends. Without it in the cap,
 * three heap bombs at once in a child of three workers (64 MB each, Node 20,
 * a loaded machine) reached the child's cap in 9 of 30 rounds, and the child
 * ended with all three; with it, 0 of 30.
 */
export const NODE_HEAP_LIMIT_LEEWAY_MB = 16;

/**
 * Room for what the child does beyond an idle process: piscina and
 * toolpool's own code, the IPC channel's buffers, loading the tool modules,
 * and glibc's per-thread malloc arenas, which grow with contention: 48 MB was
 * enough on a quiet machine, but once in a full CI run on Node 26 a 32 MB
 * Buffer under a 128 MB cap was refused, so the slack has headroom for load.
 */
const CHILD_RUNTIME_SLACK_MB = 80;

/**
 * glibc's malloc arenas for the child: one, shared by all its threads. With
 * glibc's default (one arena per thread, up to 8 per core), memory a
 * stopped worker freed stays in that worker's arena, mapped and counted by
 * the data cap, and its replacement thread takes a new arena: after a
 * Buffer bomb filled the cap, the replacement could not even compile the
 * tool module, and V8 aborted the whole child (Node 26 beside a CPU burner:
 * the next call, 32 MB under a 128 MB limit, failed as "memory limit" in 16
 * of 45 rounds; with one arena, 0 of 60). One arena serializes the child's
 * threads on malloc's lock; most of what a tool allocates is V8's heap,
 * which does not go through malloc. An `env` that sets MALLOC_ARENA_MAX
 * itself is kept as given. (musl has no per-thread arenas.)
 */
export const CHILD_MALLOC_ARENAS = '1';

const measured = new Map<string, Promise<NodeReservation>>();

/** Measures once per Node binary (a ~0.2 s probe), then answers from the cache. */
export function nodeReservation(node: string = process.execPath): Promise<NodeReservation> {
  let reservation = measured.get(node);
  if (!reservation) {
    reservation = probe(node);
    reservation.catch(() => measured.delete(node)); // a failed probe is tried again next time
    measured.set(node, reservation);
  }
  return reservation;
}

/**
 * The child's data cap in bytes: Node's own share for `workers` threads, and
 * for each of them room for a full heap (`maxMemoryMb`, its young
 * generation and Node's leeway past the limit). Each worker's heap limit is
 * then reached before the cap, so a heap bomb stops its own worker, not the
 * child and the calls beside it; the cap is the backstop that bounds what
 * the heap limits do not (Buffers and ArrayBuffers of all the child's calls
 * together).
 */
export function childDataCapBytes(reservation: NodeReservation, workers: number, maxMemoryMb: number): number {
  const nodeMb = reservation.baseMb + reservation.perWorkerMb * workers + CHILD_RUNTIME_SLACK_MB;
  const heapMb = maxMemoryMb + CHILD_YOUNG_GENERATION_MB + NODE_HEAP_LIMIT_LEEWAY_MB;
  return Math.ceil((nodeMb + workers * heapMb) * 1024 * 1024);
}

// Starts two workers one after the other and prints VmData (kB) before and after each. The first figure is taken
// after an async fs call: libuv's thread pool (4 threads, each with a stack of RLIMIT_STACK, 32 MB at the usual 8 MB)
// starts with the first one, and the child always starts it (it writes its channel through fs; tools use fs too).
const PROBE = `
const { Worker } = require('node:worker_threads');
const { readFileSync, promises } = require('node:fs');
const vmData = () => Number(/VmData:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
(async () => {
  await promises.stat('/');
  const seen = [vmData()];
  for (let i = 0; i < 2; i++) {
    const worker = new Worker('require("node:worker_threads").parentPort.postMessage(0); setInterval(() => {}, 1e6)', {
      eval: true, resourceLimits: {
        maxOldGenerationSizeMb: 64,
        codeRangeSizeMb: ${CHILD_CODE_RANGE_MB},
        maxYoungGenerationSizeMb: ${CHILD_YOUNG_GENERATION_MB},
      },
    });
    await new Promise((resolve) => worker.once('message', resolve));
    seen.push(vmData());
  }
  process.stdout.write(JSON.stringify(seen));
  process.exit(0);
})();
`;

function probe(node: string): Promise<NodeReservation> {
  return new Promise((resolve, reject) => {
    execFile(
      node,
      ['-e', PROBE],
      { env: { MALLOC_ARENA_MAX: CHILD_MALLOC_ARENAS }, timeout: 30_000 },
      (error, stdout) => {
        if (error) return reject(error);
        try {
          const [idle, one, two] = (JSON.parse(stdout) as number[]).map((kb) => kb / 1024);
          resolve({ baseMb: Math.ceil(idle!), perWorkerMb: Math.ceil(Math.max(one! - idle!, two! - one!)) });
        } catch (parseError) {
          reject(parseError);
        }
      },
    );
  });
}
