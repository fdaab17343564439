import { Type } from '@sinclair/typebox';
import { defineTool } from '../../../src/core/tool.ts';

export default defineTool({
  name: 'echo',
  description: 'Cold-start tool: echoes a text.',
  parameters: Type.Object({ text: Type.String() }),
  execute: ({ text }: { text: string }) => ({ content: [{ type: 'text', text }] }),
});
