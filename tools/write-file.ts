import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineTool } from '../src/core/tool.ts';

export interface WriteFileOptions {
  /** The only folder this tool may write into. */
  root: string;
}

/**
 * A file writer confined to a root folder (module options, like read_file).
 * Every call needs a person's approval: a write changes the world, so the
 * agent pauses (`agent_end { reason: 'approval' }`) and `toolpool run`
 * asks y/n on the terminal before it runs.
 */
export default function writeFileTool(options: WriteFileOptions) {
  if (typeof options?.root !== 'string') throw new Error('write_file needs options { root: "<folder>" }');
  const root = resolve(options.root);
  return defineTool({
    name: 'write_file',
    label: 'Write file',
    description:
      'Write a UTF-8 text file in the workspace (a person approves each write). Paths are relative to the workspace root.',
    parameters: Type.Object({
      path: Type.String({ minLength: 1, description: 'File path relative to the workspace root' }),
      text: Type.String({ maxLength: 1_000_000, description: 'The whole new content of the file' }),
    }),
    needsApproval: true,
    // It overwrites files; writing the same text twice leaves the same file.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async execute({ path, text }) {
      const file = await confine(root, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text, 'utf8');
      const bytes = Buffer.byteLength(text);
      return { content: [{ type: 'text', text: `Wrote ${bytes} bytes to ${path}.` }], details: { path, bytes } };
    },
  });
}

/** The target inside the root; after following symlinks, it (or its nearest existing folder) must stay inside the root too. */
async function confine(root: string, path: string): Promise<string> {
  const outside = () => new Error(`"${path}" is outside the workspace root; use a path inside it`);
  const candidate = resolve(root, path);
  if (!isInside(root, candidate)) throw outside();
  const realRoot = await realpath(root);
  // An existing file may be a symlink: where it points must be inside too.
  let folder = candidate;
  // The nearest folder that exists decides where the write lands.
  for (;;) {
    try {
      if (!isInside(realRoot, await realpath(folder))) throw outside();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      folder = dirname(folder);
    }
  }
  return candidate;
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
