// The JavaScript twin of sum.ts: same schema and code, no compile step.
import { Type } from '@sinclair/typebox';

export default {
  name: 'sum',
  description: 'Cold-start tool: adds numbers.',
  parameters: Type.Object({ values: Type.Array(Type.Number()) }),
  execute: ({ values }) => ({ content: [{ type: 'text', text: String(values.reduce((a, b) => a + b, 0)) }] }),
};
