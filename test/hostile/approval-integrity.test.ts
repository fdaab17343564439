/**
 * Approvals that cannot be bent. The arguments shown to a person are the
 * ones that run (prepareArguments does not run again on resume); a
 * snapshot is plain JSON that anyone with write access to where it is
 * stored (a tool, among others) could edit, so a snapshot whose pending
 * calls do not match its own transcript is refused, and with
 * `snapshotSecret` any change at all is.
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, test } from 'vitest';
import { Agent, defineTool, scriptedModel, type AgentSnapshot, type Message } from '../../src/index.ts';
import { textOf } from '../../src/core/messages.ts';
import { fixture, useExecutors } from '../support/executors.ts';

const createExecutor = useExecutors();

function payTool(log: string[]) {
  return defineTool({
    name: 'pay',
    description: 'Pay an amount',
    parameters: Type.Object({ amount: Type.Number(), to: Type.String() }),
    needsApproval: ({ amount }) => amount > 100,
    execute: ({ amount, to }) => {
      log.push(`pay:${amount}:${to}`);
      return { content: [{ type: 'text', text: `paid ${amount} to ${to}` }] };
    },
  });
}

const refund = defineTool({
  name: 'refund',
  description: 'Refund an amount',
  parameters: Type.Object({ amount: Type.Number(), to: Type.String() }),
  execute: ({ amount, to }) => ({ content: [{ type: 'text', text: `refunded ${amount} to ${to}` }] }),
});

const payments = () =>
  scriptedModel([
    {
      toolCalls: [
        { id: 'big', name: 'pay', arguments: { amount: 900, to: 'cy' } },
        { id: 'small', name: 'pay', arguments: { amount: 5, to: 'bob' } },
        { id: 'back', name: 'refund', arguments: { amount: 7, to: 'dee' } },
      ],
    },
    { text: 'done' },
  ]);

const resultTexts = (messages: Message[]) => messages.flatMap((m) => (m.role === 'toolResult' ? [textOf(m)] : []));
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

async function pausedAgent(options: { secret?: string } = {}) {
  const log: string[] = [];
  const executor = await createExecutor({ tools: [payTool(log), refund] });
  const agent = new Agent({
    model: payments(),
    executor,
    ...(options.secret ? { snapshotSecret: options.secret } : {}),
  });
  await agent.prompt('pay them');
  return { agent, executor, log, snapshot: clone(agent.snapshot()) };
}

describe('the arguments approved are the arguments that run', () => {
  test.each(['inline', 'module'])('%s tool: prepareArguments does not run again on resume', async (kind) => {
    const { default: inline } = await import('../fixtures/approval/stamped.ts');
    const executor = await createExecutor({ tools: [kind === 'inline' ? inline : fixture('approval/stamped.ts')] });
    const agent = new Agent({
      model: scriptedModel([
        { toolCalls: [{ id: 's1', name: 'stamped', arguments: { item: 'crate' } }] },
        { text: 'ok' },
      ]),
      executor,
    });
    await agent.prompt('stamp it');
    const [pending] = agent.pendingApprovals;
    const shown = pending!.args.ticket as string;
    expect(shown).toMatch(/^[a-z0-9]+$/);
    const added = await agent.resume({ approved: ['s1'] });
    expect(resultTexts(added)).toEqual([`crate with ticket ${shown}`]);
  });
});

describe('a snapshot whose pending calls do not match its transcript is refused (no secret needed)', () => {
  test('other arguments than the transcript call has', async () => {
    const { executor, snapshot } = await pausedAgent();
    snapshot.approval!.pending[0]!.args = { amount: 90_000, to: 'cy' };
    expect(() => new Agent({ model: payments(), executor, snapshot })).toThrow(
      /approval.*"big".*arguments.*not those of its tool call/,
    );
  });

  test('another tool name than the transcript call has', async () => {
    const { executor, snapshot } = await pausedAgent();
    snapshot.approval!.pending[0]!.toolName = 'refund';
    expect(() => new Agent({ model: payments(), executor, snapshot })).toThrow(
      /approval.*"big".*tool "refund".*call is for "pay"/,
    );
  });

  test('an approval for a call that was never pending (its tool needs no approval)', async () => {
    const { executor, snapshot } = await pausedAgent();
    (snapshot.approval as { approved: unknown[] }).approved.push({
      toolCallId: 'back',
      toolName: 'refund',
      args: { amount: 7, to: 'dee' },
    });
    expect(() => new Agent({ model: payments(), executor, snapshot })).toThrow(/approval.*"back".*needs no approval/);
  });

  test('a call named twice (pending and approved)', async () => {
    const { executor, snapshot } = await pausedAgent();
    (snapshot.approval as { approved: unknown[] }).approved.push(clone(snapshot.approval!.pending[0]));
    expect(() => new Agent({ model: payments(), executor, snapshot })).toThrow(/approval names a call twice/);
  });
});

describe('snapshotSecret', () => {
  const secret = 'a host secret of enough length';

  test('an untouched signed snapshot is resumed', async () => {
    const { executor, snapshot, log } = await pausedAgent({ secret });
    expect(snapshot.integrity).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    const again = new Agent({ model: payments(), executor, snapshot, snapshotSecret: secret });
    await again.resume({ approved: ['big'] });
    expect(log).toEqual(['pay:900:cy', 'pay:5:bob']);
  });

  test('a change anywhere is refused, even one that keeps transcript and pending calls consistent', async () => {
    const { executor, snapshot } = await pausedAgent({ secret });
    const call = (
      snapshot.messages.at(-1) as { content: Array<{ type: string; arguments?: Record<string, unknown> }> }
    ).content.find((part) => part.type === 'toolCall')!;
    call.arguments = { amount: 90_000, to: 'cy' };
    snapshot.approval!.pending[0]!.args = { amount: 90_000, to: 'cy' };
    expect(() => new Agent({ model: payments(), executor, snapshot, snapshotSecret: secret })).toThrow(
      /snapshot failed its integrity check/,
    );
  });

  test('a snapshot signed with another secret, or not signed, is refused', async () => {
    const { executor, snapshot } = await pausedAgent({ secret: 'another secret entirely' });
    expect(() => new Agent({ model: payments(), executor, snapshot, snapshotSecret: secret })).toThrow(
      /snapshot failed its integrity check/,
    );
    const unsigned: AgentSnapshot = clone(snapshot);
    delete unsigned.integrity;
    expect(() => new Agent({ model: payments(), executor, snapshot: unsigned, snapshotSecret: secret })).toThrow(
      /snapshot carries no integrity check/,
    );
  });
});

describe('approvals survive a snapshot only under a secret', () => {
  const twoBig = () =>
    scriptedModel([
      {
        toolCalls: [
          { id: 'first', name: 'pay', arguments: { amount: 900, to: 'cy' } },
          { id: 'second', name: 'pay', arguments: { amount: 800, to: 'eve' } },
        ],
      },
      { text: 'done' },
    ]);

  async function halfDecided(secret?: string) {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: twoBig(), executor, ...(secret ? { snapshotSecret: secret } : {}) });
    await agent.prompt('pay them');
    await agent.resume({ approved: ['first'] }); // 'second' stays pending: the run pauses again
    const snapshot = clone(agent.snapshot());
    expect(snapshot.approval!.approved.map((entry) => entry.toolCallId)).toEqual(['first']);
    return { executor, log, snapshot };
  }

  test('without a secret, an approved call of a restored snapshot waits for a decision again', async () => {
    const { executor, log, snapshot } = await halfDecided();
    const restored = new Agent({ model: twoBig(), executor, snapshot });
    expect(restored.pendingApprovals.map((entry) => entry.toolCallId)).toEqual(['first', 'second']);
    await restored.resume({ approved: ['second'] });
    expect(log).toEqual([]); // 'first' is not run on the strength of the snapshot alone
  });

  test('without a secret, a pending call moved to approved in the stored JSON is not run', async () => {
    const log: string[] = [];
    const executor = await createExecutor({ tools: [payTool(log)] });
    const agent = new Agent({ model: twoBig(), executor });
    await agent.prompt('pay them');
    const forged = clone(agent.snapshot());
    forged.approval!.approved = forged.approval!.pending.filter((entry) => entry.toolCallId === 'first');
    forged.approval!.pending = forged.approval!.pending.filter((entry) => entry.toolCallId !== 'first');
    const restored = new Agent({ model: twoBig(), executor, snapshot: forged });
    expect(restored.pendingApprovals.map((entry) => entry.toolCallId)).toEqual(['first', 'second']);
    await restored.resume({ approved: ['second'] });
    expect(log).toEqual([]);
  });

  test('with a secret, the approval survives and the call runs with the rest', async () => {
    const secret = 'a host secret of enough length';
    const { executor, log, snapshot } = await halfDecided(secret);
    const restored = new Agent({ model: twoBig(), executor, snapshot, snapshotSecret: secret });
    expect(restored.pendingApprovals.map((entry) => entry.toolCallId)).toEqual(['second']);
    await restored.resume({ approved: ['second'] });
    expect(log).toEqual(['pay:900:cy', 'pay:800:eve']);
  });
});
