import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** Waits `ms` without using CPU: keeps a worker busy so a batch lands on every worker of a pool. */
export default defineTool({
  name: 'sleep',
  description: 'Benchmark tool: waits for ms milliseconds.',
  parameters: Type.Object({ ms: Type.Integer({ minimum: 0 }) }),
  async execute({ ms }) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `slept ${ms}` }] };
  },
});
