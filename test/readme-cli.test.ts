import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, test } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
// The CLI summary lives on the CLI's docs page (the README links to it).
const readme = readFileSync(new URL('../docs/cli.md', import.meta.url), 'utf8');

/** The CLI summary (the first code block of docs/cli.md): each command's flags as written there. */
function summaryFlags(): Map<string, string[]> {
  const block = /```text\n([\s\S]*?)```/.exec(readme)![1]!;
  const flags = new Map<string, string[]>();
  let command = '';
  for (const line of block.split('\n')) {
    const start = /^toolpool (\w+)/.exec(line);
    if (start) command = start[1]!;
    if (command === 'help') continue;
    flags.set(command, [
      ...(flags.get(command) ?? []),
      ...(line.match(/--[a-z][a-z-]*/g) ?? []).filter((flag) => flag !== '--help' && flag !== '--version'),
    ]);
  }
  return flags;
}

test("every flag in the README's CLI summary is spelt as its command's --help spells it (one spelling per flag)", {
  timeout: 180_000,
}, async () => {
  const commands = summaryFlags();
  expect([...commands.keys()].sort()).toEqual(['demo', 'run', 'serve', 'worker']);
  await Promise.all(
    [...commands].map(async ([command, flags]) => {
      const { stdout } = await promisify(execFile)(process.execPath, ['bin/toolpool.js', 'help', command], {
        cwd: root,
      });
      // A flag of the help's option list: "  -t, --tools <…>" or "      --timeout <ms>" at the start of a line.
      const listed = new Set([...stdout.matchAll(/^ {2}(?:-\w, )?\s*(--[a-z][a-z-]*)/gm)].map((match) => match[1]));
      expect({ command, unknown: flags.filter((flag) => !listed.has(flag)) }).toEqual({ command, unknown: [] });
    }),
  );
});
