import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { defineTool } from '../src/core/tool.ts';

/**
 * A CPU-heavy tool: key stretching by iterated hashing, the kind of work
 * that freezes an agent when it runs on the event loop. Reports progress
 * through `onUpdate` and stops early when its signal fires.
 */
export default defineTool({
  name: 'hash',
  label: 'Hash (stretched)',
  description: 'Hash a text by iterating a digest many times (key stretching). Returns the hex digest.',
  parameters: Type.Object({
    text: Type.String({ description: 'The text to hash' }),
    rounds: Type.Integer({ minimum: 1, maximum: 50_000_000, description: 'How many times to apply the digest' }),
    algorithm: Type.Optional(Type.Union([Type.Literal('sha256'), Type.Literal('sha512')], { default: 'sha256' })),
    progressSteps: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1000, description: 'How many progress updates to send' }),
    ),
  }),
  // What MCP clients are told: it changes nothing and the same text always gives the same digest.
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  // The shape of `details`: the host checks each result against it, MCP clients get it as structuredContent.
  outputSchema: Type.Object({
    algorithm: Type.Union([Type.Literal('sha256'), Type.Literal('sha512')]),
    rounds: Type.Integer({ minimum: 1 }),
    digest: Type.String({ pattern: '^[0-9a-f]+$' }),
  }),
  prepareArguments: (raw) => ({ progressSteps: 10, ...raw }),
  execute({ text, rounds, algorithm = 'sha256', progressSteps = 10 }, ctx) {
    let digest: Buffer = Buffer.from(text);
    const every = progressSteps > 0 ? Math.max(1, Math.floor(rounds / progressSteps)) : Infinity;
    for (let round = 1; round <= rounds; round++) {
      digest = createHash(algorithm).update(digest).digest();
      if (round % every === 0) {
        ctx.signal.throwIfAborted();
        const percent = Math.round((round / rounds) * 100);
        ctx.onUpdate({ content: [{ type: 'text', text: `${percent}%` }], details: { round, rounds, percent } });
      }
    }
    const hex = digest.toString('hex');
    return { content: [{ type: 'text', text: hex }], details: { algorithm, rounds, digest: hex } };
  },
});
