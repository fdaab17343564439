import { lstatSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { Permissions } from './permissions.ts';

/** A symbolic link in a granted root that leads out of what its root allows. */
export interface LeavingLink {
  link: string;
  target: string;
  option: 'fsRead' | 'fsWrite';
}

/**
 * Node's permission model checks the path a tool names, then follows links
 * on it: a link inside a granted root reaches whatever it points at. So
 * under `permissions` (worker and process tiers; the sandbox binds only the
 * roots, where such a link leads nowhere) every link in a granted root must
 * lead inside the roots: one in an `fsRead` root inside any root, one in an
 * `fsWrite` root inside an `fsWrite` root (a write through it lands where
 * it points). Found by walking each root once, without following links;
 * folders the host may not list are skipped (the tool, as the same user,
 * may not list them either). A dangling link counts by where it would lead:
 * whoever can create its target later decides what it reaches.
 */
export function linkLeavingRoots(permissions: Permissions): LeavingLink | undefined {
  const reads = (permissions.fsRead ?? []).map(real);
  const writes = (permissions.fsWrite ?? []).map(real);
  for (const [option, roots, allowed] of [
    ['fsWrite', writes, writes],
    ['fsRead', reads, [...reads, ...writes]],
  ] as const) {
    for (const root of roots) {
      const found = walk(root, allowed);
      if (found) return { ...found, option };
    }
  }
  return undefined;
}

function walk(root: string, allowed: readonly string[]): { link: string; target: string } | undefined {
  if (allowed.includes(sep)) return undefined; // the whole file system is granted: no link leads out
  const pending = [root];
  while (pending.length > 0) {
    const path = pending.pop()!;
    let stat;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) {
      const target = linkTarget(path);
      if (!allowed.some((inside) => target === inside || target.startsWith(inside + sep)))
        return { link: path, target };
      continue;
    }
    if (!stat.isDirectory()) continue;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      continue;
    }
    for (const name of names) pending.push(join(path, name));
  }
  return undefined;
}

/** Where a link leads: its real path, or for a dangling one, where its text points. */
function linkTarget(link: string): string {
  try {
    return realpathSync(link);
  } catch {
    try {
      return resolve(dirname(link), readlinkSync(link));
    } catch {
      return link;
    }
  }
}

function real(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}
