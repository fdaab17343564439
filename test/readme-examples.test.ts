import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { approvalExample } from '../src/agent.examples.ts';
import { scriptedModel } from '../src/index.ts';
import { textOf } from '../src/messages.ts';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const examples = readFileSync(new URL('../src/agent.examples.ts', import.meta.url), 'utf8');

/** The lines between `// #region name` and `// #endregion`, unindented as the README shows them. */
function region(source: string, name: string): string {
  const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)\\n\\s*// #endregion`).exec(source);
  if (!match) throw new Error(`no region ${name}`);
  const lines = match[1]!.split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(indent)).join('\n');
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('README examples', () => {
  test('the approval example in the README is the one in src/agent.examples.ts', () => {
    expect(readme).toContain(region(examples, 'approval'));
  });

  test('the approval example pauses, survives as JSON and resumes', async () => {
    const logged: unknown[][] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void logged.push(args));
    const model = scriptedModel([
      { toolCalls: [{ id: 'rent', name: 'transfer', arguments: { to: 'ACME', amount: 900 } }] },
      (request) => ({ text: `Done: ${textOf(request.messages.at(-1) as never)}` }),
    ]);
    const store = new Map<string, string>();
    const messages = await approvalExample(model, store);
    expect(logged).toEqual([['needs approval:', 'transfer', { to: 'ACME', amount: 900 }]]);
    expect(JSON.parse(store.get('run-42')!)).toMatchObject({ version: 1, approval: { pending: [{ toolCallId: 'rent' }] } });
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(textOf(messages.at(-1) as never)).toBe('Done: Sent 900 to ACME.');
  });
});
