import { transform, type Message } from 'esbuild';
import { withEsbuild } from './esbuild-service.ts';
import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { ConfigErrors } from '../core/errors.ts';

const JAVASCRIPT = new Set(['.js', '.mjs', '.cjs', '.jsx']);

export interface SyntaxLocation {
  file: string;
  /** 1-based, as editors count. */
  line: number;
  column: number;
  lineText: string;
}

/**
 * Where a JavaScript module's syntax error is. Node's import() of such a
 * module says only "Unexpected identifier 'is'", and the worker that saw it
 * cannot say more; esbuild parses the file on the host (without running
 * it) and knows the line and column. Undefined when esbuild sees no error
 * (the module failed for another reason) or the file is not JavaScript.
 */
export async function findSyntaxError(file: string): Promise<SyntaxLocation | undefined> {
  if (!JAVASCRIPT.has(extname(file))) return undefined;
  let source: string;
  try {
    source = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    await withEsbuild(() =>
      transform(source, { loader: extname(file) === '.jsx' ? 'jsx' : 'js', sourcefile: file, logLevel: 'silent' }),
    );
    return undefined;
  } catch (error) {
    const location = (error as { errors?: Message[] }).errors?.[0]?.location;
    if (!location) return undefined;
    return { file, line: location.line, column: location.column + 1, lineText: location.lineText };
  }
}

/**
 * The load error of a JavaScript module with its syntax error's place added
 * to the message; the stack (printed by the CLI with TOOLPOOL_DEBUG=1)
 * starts with the offending line and a caret. Other errors come back as they were.
 */
export async function withSyntaxLocation(file: string, error: unknown): Promise<unknown> {
  if (!(error instanceof Error)) return error;
  const location = await findSyntaxError(file);
  if (!location) return error;
  const located = new Error(ConfigErrors.syntaxErrorAt(error.message, location.file, location.line, location.column), {
    cause: error,
  });
  const frame = `  ${location.line} | ${location.lineText}\n  ${' '.repeat(String(location.line).length)} | ${' '.repeat(location.column - 1)}^`;
  located.stack = `${located.name}: ${located.message}\n${frame}\n${(error.stack ?? '').split('\n').slice(1).join('\n')}`;
  return located;
}
