import { Type } from '@sinclair/typebox';
import { defineTool } from '../../src/core/tool.ts';

/** An I/O-bound tool: waits `ms` without using CPU. Up to 8 of its calls share a worker (inline, it runs on the main thread). */
export default defineTool({
  name: 'io_wait',
  description: 'Benchmark tool: waits for ms milliseconds, like a tool waiting on the network.',
  parameters: Type.Object({ ms: Type.Integer({ minimum: 0 }) }),
  concurrency: 8,
  async execute({ ms }) {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `waited ${ms}` }] };
  },
});
