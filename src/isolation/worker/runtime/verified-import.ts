import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Imports a compiled file of the compile cache by content, not by path: the
 * bytes are read once, checked against the sha256 the host computed when it
 * compiled them, and those very bytes are imported (as a `data:` URL, named
 * after the file in stack traces). A file rewritten in the cache after the
 * host compiled it — by a tool of another module, or another process of the
 * same user — is refused rather than run, and a rewrite between the check
 * and the import changes nothing. The compiled code imports only builtins
 * and absolute `file:` URLs (packages pinned by the compiler), which a
 * `data:` module resolves as a file would.
 */
export async function importVerified(file: string, codeHash: string): Promise<unknown> {
  const code = readFileSync(file);
  const actual = createHash('sha256').update(code).digest('hex');
  if (actual !== codeHash) {
    // Plain Error: it crosses to the host as text inside the load failure, where the host gives it its code.
    throw new Error(
      `its compiled copy ${file} is not what toolpool compiled (it was changed after compiling; sha256 ${actual.slice(0, 16)}…, expected ${codeHash.slice(0, 16)}…)`,
    );
  }
  const named = `${code.toString('utf8')}\n//# sourceURL=${pathToFileURL(file).href}\n`;
  return import(`data:text/javascript;base64,${Buffer.from(named).toString('base64')}`);
}
