import { Type } from '@sinclair/typebox';
import { defineTool } from '../../../src/core/tool.ts';

export default defineTool({
  name: 'sum',
  description: 'Cold-start tool: adds numbers.',
  parameters: Type.Object({ values: Type.Array(Type.Number()) }),
  execute: ({ values }: { values: number[] }) => ({
    content: [{ type: 'text', text: String(values.reduce((a, b) => a + b, 0)) }],
  }),
});
