import { Type } from '@sinclair/typebox';
import { defineTool } from '../../../src/core/tool.ts';

export default defineTool({
  name: 'upper',
  description: 'Cold-start tool: upper-cases a text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: ({ text }: { text: string }) => ({ content: [{ type: 'text', text: text.toUpperCase() }] }),
});
