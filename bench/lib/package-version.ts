import { readFileSync } from 'node:fs';

/** The version of an installed package, read from its package.json; 'unknown' when it is not installed. */
export function packageVersion(name: string): string {
  try {
    const path = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
