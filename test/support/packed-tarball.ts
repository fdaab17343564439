/**
 * `npm pack` of this tree, made once and shared: by the test files that
 * install toolpool as a user gets it, and by the next run (another Node
 * line of the same CI run) while the tree is the same. The tarball is kept
 * in the temporary folder under a hash of every file that can go into it
 * (what git lists, outside test/ and bench/: sources, docs, manifests, the
 * lockfile that pins the compiler), so any change packs anew. Packing runs
 * the build (prepack), which writes dist/: a lock makes concurrent test
 * files wait for one pack instead of building into dist/ at once.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** A lock this old was left by a run that died: it is taken over. */
const STALE_LOCK_MS = 10 * 60_000;

function run(command: string, args: string[], cwd: string, timeoutMs: number) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** A hash of every file that can change the tarball. */
async function treeKey(): Promise<string> {
  const listed = await run('git', ['ls-files', '-co', '--exclude-standard', '-z'], root, 60_000);
  if (listed.code !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const files = listed.stdout
    .split('\0')
    .filter((file) => file && !/^(test|bench|node_modules|\.cache|dist)(\/|$)/.test(file))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) {
    const content = await readFile(join(root, file)).catch(() => undefined); // listed but deleted
    hash.update(`${file}\0${content === undefined ? '-' : content.length}\0`);
    if (content) hash.update(content);
  }
  return hash.digest('hex').slice(0, 24);
}

let packing: Promise<string> | undefined;

/** The absolute path of this tree's packed tarball (packed now if no run packed this tree yet). */
export function packedTarball(): Promise<string> {
  packing ??= pack();
  return packing;
}

async function pack(): Promise<string> {
  const folder = join(tmpdir(), `toolpool-pack-${await treeKey()}`);
  const lock = `${folder}.lock`;
  for (;;) {
    const found = await readdir(folder).catch(() => [] as string[]);
    const tarball = found.find((name) => name.endsWith('.tgz'));
    if (tarball) return join(folder, tarball);
    try {
      await mkdir(lock);
    } catch {
      const since = await stat(lock).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 500));
      continue;
    }
    try {
      const staging = await mkdtemp(`${folder}.staging-`);
      const packed = await run('npm', ['pack', '--pack-destination', staging, '--loglevel=error'], root, 300_000);
      if (packed.code !== 0) throw new Error(`npm pack failed (${packed.code}): ${packed.stderr}`);
      await rename(staging, folder);
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}
