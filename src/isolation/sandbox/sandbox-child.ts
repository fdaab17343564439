/**
 * The sandbox's Node entry: starts the network forwarders, then runs the
 * process tier's child entry unchanged. Arguments: the forwarder plan as
 * JSON, then the child entry file.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { ForwardRule } from './net-allowlist.ts';
import { startForwarders } from './net-forwarder.ts';

interface SandboxChildPlan {
  socket?: string;
  rules: ForwardRule[];
}

const O_CLOEXEC = 0o2000000;

/**
 * Descriptors the host process held without close-on-exec pass through
 * spawn, prlimit and bwrap into this process (seen: a pipe of the host's
 * parent). Everything Node and libuv open has O_CLOEXEC, so any other
 * descriptor above stdio and the IPC channel (fd 3) is inherited: close it
 * before any tool code runs.
 */
function closeInheritedDescriptors(): void {
  for (const entry of readdirSync('/proc/self/fd')) {
    const fd = Number(entry);
    if (fd <= 3) continue;
    try {
      const flags = Number.parseInt(/flags:\s*(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '', 8);
      if (!Number.isNaN(flags) && (flags & O_CLOEXEC) === 0) closeSync(fd);
    } catch {
      // gone already (the directory listing's own descriptor)
    }
  }
}

closeInheritedDescriptors();

const [planText = '{"rules":[]}', entry] = process.argv.slice(2);
const plan = JSON.parse(planText) as SandboxChildPlan;

// The host sends its first message as soon as the child starts; hold what
// arrives while this module and the entry load, and hand it on in order.
const early: unknown[] = [];
const hold = (message: unknown) => void early.push(message);
process.on('message', hold);

if (plan.socket && plan.rules.length > 0) await startForwarders(plan.socket, plan.rules);
await import(pathToFileURL(entry!).href);
process.off('message', hold);
for (const message of early) process.emit('message', message as never, undefined as never);
