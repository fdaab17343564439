import { Type } from '@sinclair/typebox';
import { defineTool } from '../src/core/tool.ts';

/**
 * A deliberately unreliable tool, for the demo and the tests: it shows what
 * toolpool does with a tool that dies. `crash` calls `process.exit(1)` in
 * its worker (the whole worker goes down), `throw` throws an error, `hang`
 * never returns and ignores its signal (a timeout or an abort kills it),
 * `ok` answers normally. In every failing case the model gets an error
 * result and the host process keeps running.
 */
export default defineTool({
  name: 'flaky',
  label: 'Flaky service',
  description: 'Call a flaky remote service. It sometimes crashes.',
  parameters: Type.Object({
    mode: Type.Union([Type.Literal('ok'), Type.Literal('throw'), Type.Literal('crash'), Type.Literal('hang')], {
      description: 'How the call goes: ok, throw, crash (the process exits) or hang',
    }),
  }),
  annotations: { openWorldHint: true },
  async execute({ mode }) {
    switch (mode) {
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: process.exit() does not return.
      case 'crash':
        process.exit(1);
      case 'throw':
        throw new Error('the flaky service answered 503 Service Unavailable');
      case 'hang':
        await new Promise(() => {});
        throw new Error('unreachable');
      case 'ok':
        return { content: [{ type: 'text', text: 'the flaky service answered 200 OK' }] };
    }
  },
});
