import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import type { ApprovalOptions, Executor, Listener, ToolCall, ToolEvent, ToolResult, ToolSchema } from '../../index.ts';
import { AdapterErrors } from '../../core/errors.ts';
import { ApprovedCalls } from './approved-calls.ts';
import { toModelOutput } from './model-output.ts';
import { ToolpoolToolError } from './tool-error.ts';
import { UpdateQueue } from './update-queue.ts';

/** What the adapter needs of an executor: its definitions, their approval policy, `executeBatch` and `needsApproval`. */
export type AiSdkExecutor = Pick<Executor, 'definitions' | 'metadata' | 'executeBatch' | 'needsApproval'>;

/** A tool's output: the toolpool result, `details` included (the model reads only `content`). */
export type AiSdkToolOutput = Pick<ToolResult, 'content' | 'details'>;

type Input = Record<string, unknown>;
/** The SDK's tool context, unused: a toolpool tool gets its capabilities from the executor (`host`). */
type SdkContext = Record<string, unknown>;

export type AiSdkTool = Tool<Input, AiSdkToolOutput, SdkContext>;
export type AiSdkToolSet = Record<string, AiSdkTool>;

/**
 * The executor's tools as an AI SDK `ToolSet` for `generateText` /
 * `streamText`. Each call runs through the executor (validation and
 * coercion, hooks, limits, isolation) with the SDK's `abortSignal`; an error
 * result is thrown as a `ToolpoolToolError` carrying toolpool's text, which
 * the SDK hands to the model as a tool error. Progress (`ctx.onUpdate`)
 * streams out as preliminary tool results. A tool with `needsApproval` gets
 * the SDK's own approval flow: the SDK returns a `tool-approval-request`,
 * and the call runs once the app answers with an approving
 * `tool-approval-response`.
 */
export function aiSdkTools(executor: AiSdkExecutor): AiSdkToolSet {
  const approved = new ApprovedCalls();
  return Object.fromEntries(
    executor.definitions.map((definition) => [definition.name, toAiSdkTool(executor, definition, approved)]),
  );
}

function toAiSdkTool(executor: AiSdkExecutor, definition: ToolSchema, approved: ApprovedCalls): AiSdkTool {
  const gated = (executor.metadata.get(definition.name)?.needsApproval ?? 'never') !== 'never';
  return tool<Input, AiSdkToolOutput, SdkContext>({
    description: definition.description,
    // No `validate`: the SDK passes the model's input through, and toolpool validates and coerces it.
    inputSchema: jsonSchema<Input>(definition.parameters as JSONSchema7),
    // The tool-level setting (the SDK prefers generateText's toolApproval, which takes precedence over it).
    ...(gated
      ? {
          needsApproval: (input: Input, { toolCallId }: { toolCallId: string }) =>
            askApproval(executor, approved, { id: toolCallId, name: definition.name, arguments: input }),
        }
      : {}),
    execute: (input, { toolCallId, abortSignal }) =>
      runCall(
        executor,
        { id: toolCallId, name: definition.name, arguments: input },
        abortSignal,
        gated ? approvalsFor(approved, toolCallId) : undefined,
      ),
    toModelOutput: ({ output }) => toModelOutput(output.content),
  });
}

/**
 * The SDK's question "does this call need approval?", answered by
 * toolpool's gate (validation, the tool's `needsApproval`), without running
 * the call. A call that would fail anyway is not put before a person.
 */
async function askApproval(executor: AiSdkExecutor, approved: ApprovedCalls, call: ToolCall): Promise<boolean> {
  const [pending] = await executor.needsApproval([call]);
  if (!pending) return false;
  approved.asked(pending);
  return true;
}

/** A call the SDK asked about runs approved; any other call of a gated tool is refused if it turns out to need approval. */
function approvalsFor(approved: ApprovedCalls, toolCallId: string): ApprovalOptions {
  const call = approved.take(toolCallId);
  return call ? { approved: [call] } : { undecided: { refuse: AdapterErrors.aiSdkNotAsked() } };
}

/** Yields each update as a preliminary result, then the result (the last value yielded is the SDK's final output). */
async function* runCall(
  executor: AiSdkExecutor,
  call: { id: string; name: string; arguments: Input },
  signal: AbortSignal | undefined,
  approvals: ApprovalOptions | undefined,
): AsyncGenerator<AiSdkToolOutput> {
  const updates = new UpdateQueue<ToolResult>();
  const onEvent: Listener<ToolEvent> = (event) => {
    if (event.type === 'tool_update') updates.push(event.partial);
  };
  const batch = executor.executeBatch([call], {
    ...(signal ? { signal } : {}),
    onEvent,
    ...(approvals ? { approvals } : {}),
  });
  const end = () => updates.end();
  batch.then(end, end);
  for await (const partial of updates) yield output(partial);
  const message = (await batch).results[0]!;
  if (message.isError) throw new ToolpoolToolError(message);
  yield output(message);
}

function output(result: Pick<ToolResult, 'content' | 'details'>): AiSdkToolOutput {
  return result.details === undefined
    ? { content: result.content }
    : { content: result.content, details: result.details };
}
