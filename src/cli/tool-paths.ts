import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { runError } from './errors.ts';

/**
 * `--tools` values (repeatable, or comma-separated) as absolute paths, each
 * checked to exist. Files and folders are passed on as they are: a folder
 * stands for the tool modules in it, by createExecutor's rule (see
 * src/tools/tool-folders.ts), and a helper module in it that exports no tool is
 * skipped with one warning instead of stopping the command.
 */
export async function expandToolPaths(values: readonly string[]): Promise<string[]> {
  const paths: string[] = [];
  for (const value of values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)) {
    const path = resolve(value);
    if (!(await stat(path).catch(() => undefined))) throw runError(`--tools ${value}: no such file or folder`);
    paths.push(path);
  }
  return paths;
}
