import { execPath } from 'node:process';
import { existsSync } from 'node:fs';
import { expect, test } from 'vitest';
import { filesOf, runtimeFilesOf, type LddAnswer } from '../../src/isolation/sandbox/node-libraries.ts';

/** An ldd stand-in that gives the answers it is handed, one per question, and counts them. */
function ldd(...answers: LddAnswer[]) {
  const asked: string[] = [];
  const ask = async (program: string) => {
    asked.push(program);
    return answers.shift();
  };
  return { ask, asked };
}

const someLibraryFolder = ['/lib', '/lib64', '/usr/lib', '/usr/lib64'].find((dir) => existsSync(dir))!;

test('a program ldd gave no answer for (timed out, missing) gets the library folders, and ldd is asked again next time', async () => {
  const { ask, asked } = ldd(undefined, ['/lib64/ld-linux-x86-64.so.2']);
  const first = await filesOf(execPath, ask);
  expect(first).toContain(someLibraryFolder);
  const second = await filesOf(execPath, ask);
  expect(asked).toHaveLength(2);
  expect(second).not.toContain(someLibraryFolder);
  // Answered: kept, not asked a third time.
  await filesOf(execPath, ask);
  expect(asked).toHaveLength(2);
});

test('a program ldd says loads no library (a static binary, a script) is the file alone, and kept', async () => {
  const script = new URL('../fixtures/hostile/hostile.ts', import.meta.url).pathname;
  const { ask, asked } = ldd([]);
  expect(await filesOf(script, ask)).toEqual([script]);
  expect(await filesOf(script, ask)).toEqual([script]);
  expect(asked).toHaveLength(1);
});

test('the real ldd: a script is the file alone; a dynamic binary comes with its loader', async () => {
  const script = new URL('../fixtures/hostile/update-flood.ts', import.meta.url).pathname;
  expect(await runtimeFilesOf(script)).toEqual([script]);
  const shell = await runtimeFilesOf('/bin/sh');
  expect(shell.some((file) => /ld-linux|ld-musl/.test(file))).toBe(true);
});
