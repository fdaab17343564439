import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/**
 * Sends progress updates. `flood`: `count` updates in one synchronous loop,
 * as fast as the tool can call onUpdate (the worst case for the relay).
 * `paced`: one update every `intervalMs`, each stamped with the process-wide
 * monotonic clock (`process.hrtime`, shared by all threads) so the host can
 * measure onUpdate → tool_update latency.
 */
export default defineTool({
  name: 'updates',
  description: 'Benchmark tool: emits progress updates.',
  parameters: Type.Object({
    mode: Type.Union([Type.Literal('flood'), Type.Literal('paced')]),
    count: Type.Integer({ minimum: 0 }),
    intervalMs: Type.Optional(Type.Number({ minimum: 0 })),
  }),
  async execute({ mode, count, intervalMs = 2 }, ctx) {
    if (mode === 'flood') {
      for (let i = 1; i <= count; i++) ctx.onUpdate({ content: [], details: { i } });
    } else {
      for (let i = 1; i <= count; i++) {
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
        ctx.onUpdate({ content: [], details: { i, sentAt: Number(process.hrtime.bigint()) } });
      }
    }
    return { content: [{ type: 'text', text: `sent ${count}` }], details: { sent: count } };
  },
});
