import { describe, expect, test } from 'vitest';
import { createExecutor } from '../src/index.ts';
import { call, fixture } from './support/executors.ts';

describe('await using', () => {
  test('an executor declared with await using is closed at the end of its scope', async () => {
    let leftBehind;
    {
      await using executor = await createExecutor({ tools: [fixture('probe.ts')] });
      const { results } = await executor.executeBatch([call('1', 'probe', { action: 'ok' })]);
      expect(results[0]!.isError).toBe(false);
      leftBehind = executor;
    }
    await expect(leftBehind.executeBatch([])).rejects.toThrow('This executor is closed');
  });

  test('Symbol.asyncDispose is close(): calling both is fine', async () => {
    const executor = await createExecutor({ tools: [] });
    await executor[Symbol.asyncDispose]();
    await executor.close();
    await expect(executor.executeBatch([])).rejects.toThrow('This executor is closed');
  });
});
