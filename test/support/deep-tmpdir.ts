import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs `body` with TMPDIR a folder 120 bytes deeper than the usual one, so
 * a Unix socket made in it is longer than the kernel allows, and returns
 * what was left in that folder afterwards.
 */
export async function inDeepTmpdir(body: () => Promise<void>): Promise<string[]> {
  const outer = mkdtempSync(join(tmpdir(), 'toolpool-deep-'));
  const deep = join(outer, 'x'.repeat(120));
  mkdirSync(deep);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = deep;
  try {
    await body();
    return readdirSync(deep);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    rmSync(outer, { recursive: true, force: true });
  }
}
