// The JavaScript twin of echo.ts: same schema and code, no compile step.
import { Type } from '@sinclair/typebox';

export default {
  name: 'echo',
  description: 'Cold-start tool: echoes a text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: ({ text }) => ({ content: [{ type: 'text', text }] }),
};
