import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The bwrap executable on a PATH, or undefined. */
export function findBwrap(path: string | undefined = process.env.PATH): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
