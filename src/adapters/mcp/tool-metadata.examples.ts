/**
 * The README's example of what MCP clients see of a tool besides its
 * schema, type-checked with the rest (test/adapters/readme-examples.test.ts
 * checks the README quotes it and serves it to the SDK client).
 */
// #region readme
// tools/deploy.ts: hints, the shape of its details, progress with a total, and an approval.
import { Type } from '@sinclair/typebox';
import { defineTool } from '../../index.ts';

export default defineTool({
  name: 'deploy',
  label: 'Deploy', // the MCP title
  description: 'Deploy a service to the staging cluster',
  parameters: Type.Object({ service: Type.String(), replicas: Type.Integer({ minimum: 1, maximum: 10 }) }),
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: true },
  outputSchema: Type.Object({ service: Type.String(), ready: Type.Integer() }), // details -> structuredContent
  needsApproval: true, // the MCP client asks the person (elicitation) before it runs
  async execute({ service, replicas }, ctx) {
    for (let ready = 1; ready <= replicas; ready++) {
      ctx.onUpdate({ content: [{ type: 'text', text: `${ready}/${replicas} ready` }], details: { progress: ready, total: replicas } });
    }
    return { content: [{ type: 'text', text: `${service}: ${replicas} ready` }], details: { service, ready: replicas } };
  },
});
// #endregion
