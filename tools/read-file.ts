import { open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineTool } from '../src/core/tool.ts';

export interface ReadFileOptions {
  /** The only folder this tool may read from. */
  root: string;
}

/**
 * A file reader confined to a root folder, given as module options:
 * `createExecutor({ tools: [{ module: 'tools/read-file.ts', options: { root: './data' } }] })`.
 * Paths are resolved against the root and, after following symlinks, must
 * stay inside it.
 */
export default function readFileTool(options: ReadFileOptions) {
  if (typeof options?.root !== 'string') throw new Error('read_file needs options { root: "<folder>" }');
  const root = resolve(options.root);
  return defineTool({
    name: 'read_file',
    label: 'Read file',
    description: `Read a UTF-8 text file from the workspace. Paths are relative to the workspace root.`,
    parameters: Type.Object({
      path: Type.String({ minLength: 1, description: 'File path relative to the workspace root' }),
      maxBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 64_000 })),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    async execute({ path, maxBytes = 64_000 }) {
      const file = await confine(root, path);
      const handle = await open(file, 'r');
      try {
        const buffer = Buffer.alloc(maxBytes);
        const { bytesRead } = await handle.read(buffer, 0, maxBytes, 0);
        const size = (await handle.stat()).size;
        const text = buffer.subarray(0, bytesRead).toString('utf8');
        const note = size > bytesRead ? `\n[truncated: showed ${bytesRead} of ${size} bytes]` : '';
        return { content: [{ type: 'text', text: text + note }], details: { path, bytes: bytesRead, size } };
      } finally {
        await handle.close();
      }
    },
  });
}

async function confine(root: string, path: string): Promise<string> {
  const outside = () => new Error(`"${path}" is outside the workspace root; use a path inside it`);
  const candidate = resolve(root, path);
  if (!isInside(root, candidate)) throw outside();
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new Error(`"${path}" does not exist in the workspace`);
  }
  if (!isInside(await realpath(root), real)) throw outside();
  return real;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
