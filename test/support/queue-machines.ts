import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { exited, root, startToolpool, waitForLine, type ServeChild } from './mcp-serve.ts';

/** The tool modules worker machines get, from test/fixtures/remote/. */
export const REMOTE_TOOLS = ['echo.ts', 'spin.ts', 'wait.ts', 'progress.ts', 'prepared.ts'];
export const remoteTool = (name: string) => join(root, 'test/fixtures/remote', name);

/**
 * A worker machine's own copy of the remote tools, at another path: a
 * folder laid out like the repository (test/fixtures/remote/), whose src/
 * and node_modules/ link to the repository's, so the copies import what the
 * originals import. `change` may alter a file's text (another version).
 */
export async function machineCopy(change?: (name: string, text: string) => string): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), 'toolpool-machine-'));
  copies.push(base);
  const folder = join(base, 'test/fixtures/remote');
  await mkdir(folder, { recursive: true });
  await symlink(join(root, 'src'), join(base, 'src'));
  await symlink(join(root, 'node_modules'), join(base, 'node_modules'));
  for (const name of REMOTE_TOOLS) {
    if (!change) await cp(remoteTool(name), join(folder, name));
    else await writeFile(join(folder, name), change(name, await readFile(remoteTool(name), 'utf8')));
  }
  return folder;
}

const copies: string[] = [];
const machines: ServeChild[] = [];

afterAll(async () => {
  for (const child of machines.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(copies.splice(0).map((base) => rm(base, { recursive: true, force: true })));
});

/** `toolpool worker` on `queue` with its own copy of the tools; resolves once it says it serves. */
export async function startMachine(
  redisUrl: string,
  queue: string,
  options: { tools?: string; args?: string[] } = {},
): Promise<ServeChild> {
  const tools = options.tools ?? (await machineCopy());
  const child = startToolpool('worker', [
    '--redis',
    redisUrl,
    '--queue',
    queue,
    '--tools',
    tools,
    ...(options.args ?? []),
  ]);
  machines.push(child);
  await waitForLine(child, /on queue \S+ at redis:\/\//);
  return child;
}

/** SIGTERM, and how it ended. */
export async function stopMachine(child: ServeChild) {
  child.kill('SIGTERM');
  return exited(child);
}
