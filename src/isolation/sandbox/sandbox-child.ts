/**
 * The sandbox's Node entry: starts the network forwarders, then runs the
 * process tier's child entry unchanged. Arguments: the forwarder plan as
 * JSON, then the child entry file.
 */
import { pathToFileURL } from 'node:url';
import type { ForwardRule } from './net-allowlist.ts';
import { startForwarders } from './net-forwarder.ts';

interface SandboxChildPlan {
  socket?: string;
  rules: ForwardRule[];
}

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
