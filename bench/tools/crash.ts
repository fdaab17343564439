import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** Ends its worker thread (`process.exit` in a worker ends only that worker). */
export default defineTool({
  name: 'crash',
  description: 'Benchmark tool: crashes its worker.',
  parameters: Type.Object({}),
  execute() {
    process.exit(3);
  },
});
