import { Type } from '@sinclair/typebox';
import { defineTool, type ToolResult } from '../../../src/core/tool.ts';

/**
 * The fault soak's one tool: `kind` names the fault (or `ok`), `tag` makes
 * each call's value its own, so a result that reached the wrong call shows.
 */
const text = (value: string): ToolResult => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new Error('soak: stopped by its signal'));
      },
      { once: true },
    );
  });

export default defineTool({
  name: 'fault',
  description: 'Fault soak tool: does what `kind` says.',
  parameters: Type.Object({
    kind: Type.String(),
    tag: Type.String(),
    n: Type.Optional(Type.Integer({ minimum: 0 })),
  }),
  async execute({ kind, tag, n = 0 }, ctx) {
    switch (kind) {
      case 'ok':
        return { content: [{ type: 'text', text: `ok ${tag}` }], details: { tag, n } };
      case 'slow-ok':
        await sleep(n, ctx.signal);
        return { content: [{ type: 'text', text: `ok ${tag}` }], details: { tag, n } };
      case 'throw':
        throw new Error(`soak throw ${tag}`);
      case 'reject':
        return new Promise<ToolResult>((_, reject) => setTimeout(() => reject(new Error(`soak reject ${tag}`)), n));
      case 'exit':
        process.exit(7);
        break;
      case 'timer':
        setTimeout(() => {
          throw new Error(`soak timer ${tag}`);
        }, 1);
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        return text('unreachable');
      case 'heap': {
        const hoard: number[][] = [];
        for (;;) hoard.push(new Array(4_000_000).fill(hoard.length));
      }
      case 'wait':
        // Waits for its signal (the soak aborts it mid-call).
        await sleep(60_000, ctx.signal);
        return text('unreachable');
      case 'import':
        await import(new URL(`./broken-import.mjs?${tag}`, import.meta.url).href);
        return text('unreachable');
      case 'flood':
        for (let i = 1; i <= n; i++) ctx.onUpdate({ content: [{ type: 'text', text: `${tag} ${i}` }], details: { i } });
        return { content: [{ type: 'text', text: `flood ${tag}` }], details: { tag, n } };
      case 'huge':
        return text('x'.repeat(n));
      default:
        throw new Error(`soak: unknown kind ${kind}`);
    }
  },
});
