/**
 * Case 12: what the zero-trust hardening adds to every call, piece by
 * piece, measured in process (each sample is the mean of 1000 runs): the
 * worker's read-once copy of a result, the host's re-check of what arrived,
 * the shape checks of the call's two channel messages, the realm check after
 * the call, and the unguessable run id. The end-to-end cost of a worker call
 * (with all of it, plus the leftover-tracking async hook, which cannot be
 * switched off in a running worker) is case 1's "toolpool worker call".
 */
import { load } from '../lib/toolpool.ts';
import { summarize } from '../lib/stats.ts';
import { row, type BenchCase } from '../lib/types.ts';

type Payload = typeof import('../../src/isolation/worker/payload.ts');
type Messages = typeof import('../../src/isolation/worker/channel-messages.ts');
type RunIds = typeof import('../../src/isolation/worker/run-ids.ts');
type Realm = typeof import('../../src/isolation/worker/runtime/realm-integrity.ts');

const ROWS = [
  'result copy in the worker',
  'result re-check on the host',
  'message shape checks',
  'realm check after the call',
  'unguessable run id',
  'hardening per call (sum)',
] as const;

/** A typical small tool result. */
const RESULT = {
  content: [{ type: 'text', text: 'Found 3 documents matching "worker pool"' }],
  details: { hits: 3, ids: ['a1', 'b2', 'c3'], tookMs: 4 },
};

function meanMicros(samples: number, run: () => unknown): number[] {
  const out: number[] = [];
  const kept: unknown[] = new Array(1000);
  for (let s = 0; s < samples; s++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 1000; i++) kept[i] = run();
    out.push(Number(process.hrtime.bigint() - start) / 1e3 / 1000);
  }
  if (kept.length !== 1000) throw new Error('unreachable');
  return out;
}

export const hardening: BenchCase = {
  id: 13,
  title: 'Zero-trust hardening, per-call cost of each piece',
  rowNames: ROWS,
  async run({ quick, log }) {
    const payload = await load<Payload>('src/isolation/worker/payload.ts');
    const messages = await load<Messages>('src/isolation/worker/channel-messages.ts');
    const ids = await load<RunIds>('src/isolation/worker/run-ids.ts');
    const realm = await load<Realm>('src/isolation/worker/runtime/realm-integrity.ts');
    const samples = quick ? 3 : 200;
    log(`case 13: ${samples} samples x 1000 runs per piece`);
    const copied = payload.copyPayload(RESULT, 'result', 8 << 20);
    const start = { t: 'start', runId: 123456789, loading: false };
    const result = { t: 'result', runId: 123456789, ok: true, result: copied.ok ? copied.value : RESULT };
    const pieces = {
      copy: summarize(meanMicros(samples, () => payload.copyPayload(RESULT, 'result', 8 << 20))),
      check: summarize(meanMicros(samples, () => payload.checkPayload(result.result, 'result', 8 << 20))),
      shapes: summarize(
        meanMicros(samples, () => [messages.parseWorkerMessage(start), messages.parseWorkerMessage(result)]),
      ),
      realm: summarize(meanMicros(samples, () => realm.realmChange())),
      id: summarize(meanMicros(samples, () => ids.randomRunId())),
    };
    const sum =
      pieces.copy.median + pieces.check.median + pieces.shapes.median + pieces.realm.median + pieces.id.median;
    return {
      id: 13,
      title: hardening.title,
      rows: [
        row(ROWS[0], 'µs', pieces.copy.median, {
          p99: pieces.copy.p99,
          n: pieces.copy.n,
          note: 'copyPayload of a small result: read once, measured, copied',
        }),
        row(ROWS[1], 'µs', pieces.check.median, {
          p99: pieces.check.p99,
          n: pieces.check.n,
          note: 'checkPayload of what arrived',
        }),
        row(ROWS[2], 'µs', pieces.shapes.median, {
          p99: pieces.shapes.p99,
          n: pieces.shapes.n,
          note: 'parseWorkerMessage of start and result',
        }),
        row(ROWS[3], 'µs', pieces.realm.median, {
          p99: pieces.realm.p99,
          n: pieces.realm.n,
          note: 'builtins and prototype key counts compared',
        }),
        row(ROWS[4], 'µs', pieces.id.median, {
          p99: pieces.id.p99,
          n: pieces.id.n,
          note: '48 random bits from a pooled buffer',
        }),
        row(ROWS[5], 'µs', sum, { note: 'sum of the medians above; the start message itself is in case 1' }),
      ],
      targets: [],
      notes: [
        'Measured on the main thread of the bench process; the worker-side pieces run the same code in the worker.',
      ],
    };
  },
};
