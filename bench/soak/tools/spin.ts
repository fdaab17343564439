import { Type } from '@sinclair/typebox';
import { defineTool } from '../../../src/core/tool.ts';

/** The fault soak's busy loop: never yields, never looks at its signal; its own timeoutMs is short, so it trips first. */
export default defineTool({
  name: 'spin',
  description: 'Fault soak tool: spins past its timeoutMs.',
  parameters: Type.Object({ tag: Type.String() }),
  limits: { timeoutMs: 1_000 },
  execute() {
    for (;;) {
      // spin
    }
  },
});
