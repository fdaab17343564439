/**
 * The Node entry inside an MCP server's sandbox. An MCP server is any
 * program, with no toolpool code in it, so this small process does what the
 * sandbox needs before it runs: it starts the `permissions.net` forwarders,
 * becomes nobody when the host is root, then starts the server with its
 * stdin, stdout and stderr (the protocol goes straight between the host and
 * the server) and ends with the server's exit status.
 *
 * The plan comes on fd 3, not on the command line: bwrap is started with
 * an empty environment and the command line of every process is readable by
 * every user of the host, while the server's `env` may hold secrets.
 */
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { constants } from 'node:os';
import { keepInspectorClosed } from '../isolation/common/inspector-guard.ts';
import type { ForwardRule } from '../isolation/sandbox/net-allowlist.ts';
import { startForwarders } from '../isolation/sandbox/net-forwarder.ts';
import { becomeUser } from '../isolation/sandbox/sandbox-user.ts';

/** What the host sends on fd 3 (see sandbox-launch.ts). */
export interface SandboxEntryPlan {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  socket?: string;
  rules: ForwardRule[];
  dropTo?: { uid: number; gid: number };
}

/** The exit code of a server that could not be started (the shell's "command not found"). */
const NOT_STARTED = 127;

keepInspectorClosed();
const plan = JSON.parse(await readPlan()) as SandboxEntryPlan;
if (plan.socket && plan.rules.length > 0) await startForwarders(plan.socket, plan.rules);
if (plan.dropTo) becomeUser(plan.dropTo);
const server = spawn(plan.command, plan.args, { stdio: 'inherit', env: plan.env, cwd: plan.cwd });
server.once('error', (error) => {
  process.stderr.write(`toolpool sandbox: could not start ${plan.command}: ${error.message}\n`);
  process.exit(NOT_STARTED);
});
// A death by signal is passed on as 128 + N, as bubblewrap reports its own child's.
server.once('exit', (code, signal) => process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1)));

function readPlan(): Promise<string> {
  return new Promise((resolve, reject) => {
    const channel = new Socket({ fd: 3, readable: true, writable: false });
    const chunks: Buffer[] = [];
    channel.on('data', (chunk: Buffer) => chunks.push(chunk));
    channel.once('error', reject);
    channel.once('end', () => {
      channel.destroy(); // fd 3 is not passed on to the server
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}
