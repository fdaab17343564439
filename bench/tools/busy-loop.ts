import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** Never yields, never looks at its signal: only a kill stops it (case 11). */
export default defineTool({
  name: 'busy_loop',
  description: 'Spins forever, ignoring its signal.',
  parameters: Type.Object({}),
  execute() {
    for (;;) {
      // spin
    }
  },
});
