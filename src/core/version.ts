import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** toolpool's own version, from its package.json (found from the sources or from dist/). */
export function toolpoolVersion(): string {
  if (cached !== undefined) return cached;
  cached = 'unknown';
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'toolpool') {
        cached = pkg.version ?? 'unknown';
        break;
      }
    } catch {
      // Try the next layout (source or dist).
    }
  }
  return cached;
}
