/**
 * The sandbox's Node entry: starts the network forwarders, then runs the
 * process tier's child entry unchanged. Arguments: the forwarder plan as
 * JSON, then the child entry file.
 */
import { pathToFileURL } from 'node:url';
import { keepInspectorClosed } from '../common/inspector-guard.ts';
import type { ForwardRule } from './net-allowlist.ts';
import { startForwarders } from './net-forwarder.ts';
import { becomeUser } from './sandbox-user.ts';

interface SandboxChildPlan {
  socket?: string;
  rules: ForwardRule[];
  /** The user to become before any tool code loads (the host is root; see bwrap-args.ts). */
  dropTo?: { uid: number; gid: number };
}

keepInspectorClosed();

const [planText = '{"rules":[]}', entry] = process.argv.slice(2);
const plan = JSON.parse(planText) as SandboxChildPlan;

if (plan.socket && plan.rules.length > 0) await startForwarders(plan.socket, plan.rules);
if (plan.dropTo) becomeUser(plan.dropTo);
// The host's first frames wait on the channel's socket until the entry reads them.
await import(pathToFileURL(entry!).href);
