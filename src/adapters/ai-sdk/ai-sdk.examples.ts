/**
 * The README's "Use with the AI SDK" example, type-checked with the rest
 * (test/adapters/readme-examples.test.ts checks the README quotes it and
 * runs it with the SDK's mock model).
 */
// #region readme
import { generateText, isStepCount, type LanguageModel } from 'ai';
import { createExecutor } from '../../index.ts';
import { aiSdkTools } from './index.ts';

// model: any AI SDK model, e.g. openai('gpt-4o-mini') from @ai-sdk/openai.
export async function hashWithModel(model: LanguageModel): Promise<string> {
  const executor = await createExecutor({ tools: ['./tools/hash.ts'], limits: { timeoutMs: 5_000 } });
  try {
    const result = await generateText({
      model,
      tools: aiSdkTools(executor), // validated, isolated, killed at the timeout
      stopWhen: isStepCount(5),
      prompt: 'Hash "hello" with 100000 rounds of sha256.',
    });
    return result.text; // a timeout or a crash reached the model as a tool error
  } finally {
    await executor.close();
  }
}
// #endregion
