import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** The trivial tool: validates one number and returns it as text. Measures pure call overhead. */
export default defineTool({
  name: 'noop',
  description: 'Benchmark tool: returns its argument as text.',
  parameters: Type.Object({ n: Type.Number() }),
  execute: ({ n }) => ({ content: [{ type: 'text', text: String(n) }] }),
});
