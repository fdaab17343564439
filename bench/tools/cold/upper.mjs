// The JavaScript twin of upper.ts: same schema and code, no compile step.
import { Type } from '@sinclair/typebox';

export default {
  name: 'upper',
  description: 'Cold-start tool: upper-cases a text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: ({ text }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
};
