import { accessSync, constants, openSync, readSync, closeSync, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { runtimeFilesOf } from '../isolation/sandbox/node-libraries.ts';

/**
 * The program an MCP server's `command` names, as an absolute real path:
 * a path (relative to the server's working folder), or a name looked up on
 * this process's PATH. It is resolved here, on the host, because the server
 * gets only its own `env` (no PATH unless given) and, in a sandbox, sees no
 * folder to search. Undefined when there is no such executable file.
 */
export function resolveCommand(command: string, cwd: string, path = process.env.PATH ?? ''): string | undefined {
  if (command.includes('/')) return executable(isAbsolute(command) ? command : resolve(cwd, command));
  for (const dir of path.split(delimiter)) {
    if (dir === '') continue;
    const found = executable(join(dir, command));
    if (found) return found;
  }
  return undefined;
}

function executable(file: string): string | undefined {
  try {
    if (!statSync(file).isFile()) return undefined;
    accessSync(file, constants.X_OK);
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * What a sandbox must show for `program` to start: the file and its shared
 * libraries, and for a script its interpreter (`#!/usr/bin/python3`) with
 * that one's libraries. An interpreter found through `/usr/bin/env` is not
 * followed: the server's `env` has no PATH unless given, and the program
 * env finds must then be in fsRead.
 */
export async function programFiles(program: string): Promise<string[]> {
  const interpreter = shebangInterpreter(program);
  const files = await runtimeFilesOf(program);
  if (!interpreter) return files;
  return [...new Set([...files, ...(await runtimeFilesOf(interpreter))])];
}

function shebangInterpreter(program: string): string | undefined {
  const head = Buffer.alloc(256);
  let fd: number | undefined;
  try {
    fd = openSync(program, 'r');
    const length = readSync(fd, head, 0, head.length, 0);
    const line = head.subarray(0, length).toString('utf8').split('\n', 1)[0]!;
    if (!line.startsWith('#!')) return undefined;
    const interpreter = line.slice(2).trim().split(/\s+/, 1)[0];
    return interpreter && isAbsolute(interpreter) ? executable(interpreter) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
