/**
 * The README's AI SDK approval example, type-checked with the rest
 * (test/adapters/readme-examples.test.ts checks the README quotes it and
 * runs it with the SDK's mock model).
 */
// #region readme
import { generateText, isStepCount, type LanguageModel, type ModelMessage, type ToolApprovalResponse } from 'ai';
import type { Executor } from '../../index.ts';
import { aiSdkTools } from './index.ts';

// ask: your UI, e.g. a dialog that shows the tool and its input and returns the person's answer.
type Ask = (toolName: string, input: unknown) => Promise<boolean>;

export async function runWithApprovals(model: LanguageModel, executor: Executor, prompt: string, ask: Ask): Promise<string> {
  const tools = aiSdkTools(executor); // a tool with needsApproval gets the SDK's tool approval
  const messages: ModelMessage[] = [{ role: 'user', content: prompt }];
  for (;;) {
    const result = await generateText({ model, tools, messages, stopWhen: isStepCount(10) });
    messages.push(...result.response.messages);
    const requests = result.content.filter((part) => part.type === 'tool-approval-request');
    if (requests.length === 0) return result.text; // nothing waits for a person
    const answers: ToolApprovalResponse[] = [];
    for (const { approvalId, toolCall } of requests) {
      answers.push({ type: 'tool-approval-response', approvalId, approved: await ask(toolCall.toolName, toolCall.input) });
    }
    messages.push({ role: 'tool', content: answers }); // approved calls run, denied ones reach the model as denied
  }
}
// #endregion
