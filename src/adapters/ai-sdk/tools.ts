import { jsonSchema, tool, type JSONSchema7, type Tool } from 'ai';
import type { Executor, Listener, ToolEvent, ToolResult, ToolSchema } from '../../index.ts';
import { toModelOutput } from './model-output.ts';
import { ToolpoolToolError } from './tool-error.ts';
import { UpdateQueue } from './update-queue.ts';

/** What the adapter needs of an executor: its definitions and `executeBatch`. */
export type AiSdkExecutor = Pick<Executor, 'definitions' | 'executeBatch'>;

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
 * streams out as preliminary tool results.
 */
export function aiSdkTools(executor: AiSdkExecutor): AiSdkToolSet {
  return Object.fromEntries(executor.definitions.map((definition) => [definition.name, toAiSdkTool(executor, definition)]));
}

function toAiSdkTool(executor: AiSdkExecutor, definition: ToolSchema): AiSdkTool {
  return tool<Input, AiSdkToolOutput, SdkContext>({
    description: definition.description,
    // No `validate`: the SDK passes the model's input through, and toolpool validates and coerces it.
    inputSchema: jsonSchema<Input>(definition.parameters as JSONSchema7),
    execute: (input, { toolCallId, abortSignal }) => runCall(executor, { id: toolCallId, name: definition.name, arguments: input }, abortSignal),
    toModelOutput: ({ output }) => toModelOutput(output.content),
  });
}

/** Yields each update as a preliminary result, then the result (the last value yielded is the SDK's final output). */
async function* runCall(
  executor: AiSdkExecutor,
  call: { id: string; name: string; arguments: Input },
  signal: AbortSignal | undefined,
): AsyncGenerator<AiSdkToolOutput> {
  const updates = new UpdateQueue<ToolResult>();
  const onEvent: Listener<ToolEvent> = (event) => {
    if (event.type === 'tool_update') updates.push(event.partial);
  };
  const batch = executor.executeBatch([call], { ...(signal ? { signal } : {}), onEvent });
  const end = () => updates.end();
  batch.then(end, end);
  for await (const partial of updates) yield output(partial);
  const message = (await batch).results[0]!;
  if (message.isError) throw new ToolpoolToolError(message);
  yield output(message);
}

function output(result: Pick<ToolResult, 'content' | 'details'>): AiSdkToolOutput {
  return result.details === undefined ? { content: result.content } : { content: result.content, details: result.details };
}
