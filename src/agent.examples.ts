/**
 * Examples the README quotes (between the region markers), type-checked
 * with the rest of the code and run by test/readme-examples.test.ts, so the
 * docs cannot drift from the API. Not part of the build.
 */
import { Type } from '@sinclair/typebox';
import { Agent, createExecutor, defineTool, type AgentSnapshot, type Message, type Model } from './index.ts';

/** Pause for a person's approval, keep the paused agent as JSON, resume it later. */
export async function approvalExample(model: Model, store: Map<string, string>): Promise<Message[]> {
  // #region approval
  const transfer = defineTool({
    name: 'transfer',
    description: 'Send money to an account',
    parameters: Type.Object({ to: Type.String(), amount: Type.Number() }),
    needsApproval: ({ amount }) => amount > 100, // small transfers run at once
    execute: ({ to, amount }) => ({ content: [{ type: 'text', text: `Sent ${amount} to ${to}.` }] }),
  });
  const executor = await createExecutor({ tools: [transfer] });

  const agent = new Agent({ model, executor });
  agent.subscribe((event) => {
    if (event.type === 'agent_end' && event.reason === 'approval') {
      for (const call of event.pending ?? []) console.log('needs approval:', call.toolName, call.args);
    }
  });
  await agent.prompt('Pay the rent: 900 to ACME'); // resolves once the run pauses
  store.set('run-42', JSON.stringify(agent.snapshot())); // a database row, a file: it survives a restart

  // Later, in this process or another, once a person has decided:
  const snapshot = JSON.parse(store.get('run-42')!) as AgentSnapshot;
  const resumed = new Agent({ model, executor, snapshot });
  const [call] = resumed.pendingApprovals;
  await resumed.resume({ approved: [call!.toolCallId] }); // or { rejected: { [call!.toolCallId]: 'not this month' } }
  // #endregion
  await executor.close();
  return resumed.messages;
}
