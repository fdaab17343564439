import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';

/** Where shared libraries live when ldd cannot say which ones node needs. */
const FALLBACK_LIBRARY_DIRS = ['/lib', '/lib64', '/usr/lib', '/usr/lib64'];

let cached: Promise<string[]> | undefined;

/**
 * The files the running node binary needs to start: the binary itself
 * (process.execPath, so the sandbox runs the same Node line as the host)
 * and the shared libraries and loader `ldd` lists for it. Each path comes
 * with its real path too, since a library is often a symlink to a
 * versioned file and both must exist inside the sandbox.
 */
export function nodeRuntimeFiles(): Promise<string[]> {
  cached ??= readRuntimeFiles();
  return cached;
}

async function readRuntimeFiles(): Promise<string[]> {
  const libraries = await lddLibraries(process.execPath).catch(() => undefined);
  const files = [process.execPath, ...(libraries ?? FALLBACK_LIBRARY_DIRS.filter((dir) => existsSync(dir)))];
  return [...new Set(files.flatMap(withRealPath))];
}

const programs = new Map<string, Promise<string[]>>();

/**
 * The same for any program (an MCP server's command): the file and the
 * shared libraries ldd lists for it, each with its real path. A program
 * ldd cannot read (a static binary, a script) is the file alone.
 */
export function runtimeFilesOf(program: string): Promise<string[]> {
  let files = programs.get(program);
  if (!files) {
    files = lddLibraries(program)
      .catch(() => [])
      .then((libraries) => [...new Set([program, ...libraries].flatMap(withRealPath))]);
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

function lddLibraries(binary: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile('ldd', [binary], { env: {}, timeout: 5_000 }, (error, stdout) => {
      if (error) return reject(error);
      const paths = parseLdd(stdout);
      if (paths.length === 0) return reject(new Error('ldd listed no libraries'));
      resolve(paths);
    });
  });
}

function withRealPath(path: string): string[] {
  try {
    const real = realpathSync(path);
    return real === path ? [path] : [path, real];
  } catch {
    return [];
  }
}
