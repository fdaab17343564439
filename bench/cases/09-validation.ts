/**
 * Case 9: argument validation. What one validation costs (compiled once per
 * tool at registration, run per call), what compiling per call would cost,
 * pi-ai's validator on the same schema for reference, and an audit: how
 * many Ajv compiles and structuredClone calls the host makes per call.
 */
import { Ajv } from 'ajv';
import { Type } from '@sinclair/typebox';
import { Type as PiType, validateToolArguments } from '@mariozechner/pi-ai';
import { Bench } from 'tinybench';
import { toolpool, validationModule } from '../lib/toolpool.ts';
import noop from '../tools/noop.ts';
import { TOOLS, toolCall } from '../lib/fixtures.ts';
import { row, type BenchCase, type Row } from '../lib/types.ts';

const ROWS = [
  'toolpool validator: valid arguments',
  'toolpool validator: coerced arguments ("2" → 2)',
  'toolpool validator: invalid arguments (error text)',
  'Ajv compile per call (what compile-once avoids)',
  'pi-ai validateToolArguments: valid arguments',
  'Ajv compiles per call',
  'structuredClone calls per call',
] as const;

// The calculator's schema (tools/calculator.ts), with one more field of each kind.
const schema = Type.Object({
  expression: Type.String({ minLength: 1, maxLength: 500 }),
  precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 15 })),
  mode: Type.Optional(Type.Union([Type.Literal('exact'), Type.Literal('float')])),
  tags: Type.Optional(Type.Array(Type.String())),
});
const piSchema = PiType.Object({
  expression: PiType.String({ minLength: 1, maxLength: 500 }),
  precision: PiType.Optional(PiType.Integer({ minimum: 0, maximum: 15 })),
  mode: PiType.Optional(PiType.Union([PiType.Literal('exact'), PiType.Literal('float')])),
  tags: PiType.Optional(PiType.Array(PiType.String())),
});

/** Counts calls of Ajv's compile and of structuredClone while `run` runs (main thread). */
async function audit(run: () => Promise<void>): Promise<{ compiles: number; clones: number }> {
  const proto = Ajv.prototype as unknown as { compile: (...args: unknown[]) => unknown };
  const compile = proto.compile;
  const clone = globalThis.structuredClone;
  const counts = { compiles: 0, clones: 0 };
  proto.compile = function (this: unknown, ...args: unknown[]) {
    counts.compiles++;
    return compile.apply(this, args);
  };
  globalThis.structuredClone = (value, options) => {
    counts.clones++;
    return clone(value, options);
  };
  try {
    await run();
  } finally {
    proto.compile = compile;
    globalThis.structuredClone = clone;
  }
  return counts;
}

export const validation: BenchCase = {
  id: 9,
  title: 'Argument validation',
  rowNames: ROWS,
  async run({ quick, log }) {
    const { createExecutor } = await toolpool();
    const { compileArgumentValidator } = await validationModule();
    const validate = compileArgumentValidator('calc', 'bench', schema);
    const piTool = { name: 'calc', description: '', parameters: piSchema };
    const sink: unknown[] = [];
    const bench = new Bench({ time: quick ? 10 : 400, warmupTime: quick ? 5 : 100, iterations: quick ? 5 : 64 });
    bench
      .add(
        ROWS[0],
        () =>
          void sink.push(validate({ expression: '2 * (3 + 4)', precision: 2, mode: 'exact', tags: ['a'] }, undefined)),
      )
      .add(
        ROWS[1],
        () =>
          void sink.push(
            validate({ expression: '2 * (3 + 4)', precision: '2', mode: 'exact', tags: ['a'] }, undefined),
          ),
      )
      .add(
        ROWS[2],
        () => void sink.push(validate({ expression: '', precision: 'two', mode: 'fast', tags: [1] }, undefined)),
      )
      .add(
        ROWS[3],
        () =>
          void sink.push(
            new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false }).compile(schema),
          ),
      )
      .add(
        ROWS[4],
        () =>
          void sink.push(
            validateToolArguments(piTool, {
              type: 'toolCall',
              id: 'x',
              name: 'calc',
              arguments: { expression: '2 * (3 + 4)', precision: 2, mode: 'exact', tags: ['a'] },
            }),
          ),
      );
    log(
      `case 9: tinybench, ${quick ? 'quick' : '400 ms per task'}; audit over ${quick ? 20 : 1000} inline + worker calls`,
    );
    await bench.run();
    sink.length = 0;
    const rows: Row[] = bench.tasks.map((task) => {
      const result = task.result;
      if (result.state !== 'completed') throw new Error(`case 9: tinybench task ${task.name} ${result.state}`);
      return row(task.name, 'µs', result.latency.p50 * 1e3, {
        p99: result.latency.p99 * 1e3,
        n: result.latency.samplesCount,
      });
    });

    const calls = quick ? 20 : 1000;
    const inline = await createExecutor({ tools: [noop] });
    const worker = await createExecutor({ tools: [TOOLS.noop], workers: { min: 1, max: 1 } });
    try {
      await worker.executeBatch([toolCall('warm', 'noop', { n: 1 })]);
      const counts = await audit(async () => {
        for (let i = 0; i < calls; i++) {
          await inline.executeBatch([toolCall(`i${i}`, 'noop', { n: i })]);
          await worker.executeBatch([toolCall(`w${i}`, 'noop', { n: i })]);
        }
      });
      rows.push(
        row(ROWS[5], 'count', counts.compiles / (2 * calls), {
          n: 2 * calls,
          note: 'host side; schemas compile once, at createExecutor',
        }),
        row(ROWS[6], 'count', counts.clones / (2 * calls), {
          n: 2 * calls,
          note: 'host side; plain arguments are copied by hand',
        }),
      );
    } finally {
      await Promise.all([inline.close(), worker.close()]);
    }
    return { id: 9, title: validation.title, rows, targets: [], notes: [] };
  },
};
