import { readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

/**
 * The host's open file descriptors above stdio that a child process would
 * inherit: those without close-on-exec (Node opens its own files with it,
 * but a descriptor the host itself inherited, say a secret passed as fd 5,
 * has none). The process tier's child closes them before any tool runs,
 * so a tool cannot read through them (the permission model does not check
 * reads from a descriptor). Linux only; elsewhere the list is empty.
 */
export function inheritableFds(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  return entries.map(Number).filter((fd) => Number.isInteger(fd) && fd > 3 && !closesOnExec(fd));
}

function closesOnExec(fd: number): boolean {
  try {
    const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
    return flags === undefined || (parseInt(flags, 8) & O_CLOEXEC) !== 0;
  } catch {
    return true; // closed meanwhile (readdir's own descriptor, say)
  }
}
