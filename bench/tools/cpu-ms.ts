import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** Keeps its thread busy for `ms` milliseconds of wall time, then answers (case 16's CPU-bound tool). */
export default defineTool({
  name: 'cpu_ms',
  description: 'Benchmark tool: burns CPU for a few ms.',
  parameters: Type.Object({ ms: Type.Number({ minimum: 0, maximum: 1_000 }) }),
  execute: ({ ms }) => {
    const end = performance.now() + ms;
    let spins = 0;
    while (performance.now() < end) spins++;
    return { content: [{ type: 'text', text: String(spins) }] };
  },
});
