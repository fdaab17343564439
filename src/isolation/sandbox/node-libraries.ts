import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** Where shared libraries live when ldd cannot say which ones node needs. */
const FALLBACK_LIBRARY_DIRS = ['/lib', '/lib64', '/usr/lib', '/usr/lib64'];

/**
 * What `ldd` told of a program: the shared libraries it loads ([] for a
 * static binary or a script), or undefined when it gave no answer (not
 * installed, timed out under load).
 */
export type LddAnswer = string[] | undefined;

const programs = new Map<string, Promise<string[]>>();

/**
 * The files the running node binary needs to start: the binary itself
 * (process.execPath, so the sandbox runs the same Node line as the host)
 * and the shared libraries and loader `ldd` lists for it. Each path comes
 * with its real path too, since a library is often a symlink to a
 * versioned file and both must exist inside the sandbox.
 */
export function nodeRuntimeFiles(): Promise<string[]> {
  return runtimeFilesOf(process.execPath);
}

/**
 * The same for any program (an MCP server's command): the file and the
 * shared libraries ldd lists for it, each with its real path. A program
 * ldd cannot read (a static binary, a script) is the file alone.
 */
export function runtimeFilesOf(program: string): Promise<string[]> {
  return filesOf(program, askLdd);
}

/**
 * A program's files, kept once ldd answered. Without an answer the library
 * folders stand in for its libraries (the sandbox starts, with more of the
 * system's libraries visible read-only), and ldd is asked again next time:
 * one slow moment must not decide every later launch.
 */
export function filesOf(program: string, ask: (program: string) => Promise<LddAnswer>): Promise<string[]> {
  let files = programs.get(program);
  if (!files) {
    files = ask(program).then((libraries) => {
      if (libraries === undefined) programs.delete(program);
      return [...new Set([program, ...(libraries ?? libraryFolders())].flatMap(withRealPath))];
    });
    programs.set(program, files);
  }
  return files;
}

/** Parses `ldd` output: "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)". */
export function parseLdd(output: string): string[] {
  const paths: string[] = [];
  for (const line of output.split('\n')) {
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match && isAbsolute(match[1]!)) paths.push(match[1]!);
  }
  return paths;
}

function askLdd(binary: string): Promise<LddAnswer> {
  return new Promise((resolve) => {
    execFile('ldd', [binary], { env: {}, timeout: 5_000 }, (error, stdout, stderr) => {
      // No ldd on this machine: a lasting answer, so the library folders are kept rather than asked for at every launch.
      if ((error as NodeJS.ErrnoException | null)?.code === 'ENOENT') return resolve(libraryFolders());
      const paths = parseLdd(stdout);
      if (paths.length > 0 && !error) return resolve(paths);
      // It answered: the file loads no shared library (glibc's and musl's texts; ldd exits 1 for it).
      if (/not a (?:valid )?dynamic (?:executable|program)|statically linked/i.test(`${stdout}${stderr}`))
        return resolve([]);
      resolve(undefined);
    });
  });
}

function libraryFolders(): string[] {
  return FALLBACK_LIBRARY_DIRS.filter((dir) => existsSync(dir));
}

function withRealPath(path: string): string[] {
  try {
    const real = realpathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [];
  }
}
