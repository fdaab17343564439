/**
 * Every message toolpool produces, in one place. Texts that end up in an
 * error result are read by a model: they say what went wrong and, where the
 * model can fix it, what to do instead.
 */

export const ToolErrors = {
  unknownTool: (name: string, available: string[]) =>
    `Tool "${boundText(name, 200)}" not found. Available tools: ${available.length ? boundText(available.join(', '), 2000) : '(none)'}.`,
  malformedJson: (name: string, reason: string, raw: string) =>
    `The arguments for tool "${boundText(name, 200)}" are not valid JSON (${reason}). Received: ${truncate(raw, 500)}. ` +
    'Call the tool again with a JSON object as arguments.',
  argumentsTooDeep: (name: string, limit: number) =>
    `The arguments for tool "${boundText(name, 200)}" nest deeper than ${limit} levels, more than a tool call may carry; call the tool again with flatter arguments.`,
  argumentsNotObject: (name: string, raw: unknown) =>
    `The arguments for tool "${boundText(name, 200)}" must be a JSON object. Received: ${preview(raw)}.`,
  validationFailed: (name: string, problems: string[], received: unknown, total = problems.length) =>
    `Validation failed for tool "${boundText(name, 200)}":\n${listProblems(problems, total)}\n` +
    `Received arguments: ${typeof received === 'string' ? truncate(received, 500) : preview(received)}`,
  detailsDoNotMatch: (name: string, problems: string[], details: unknown, total = problems.length) =>
    `Tool "${boundText(name, 200)}" returned details that do not match its outputSchema:\n${listProblems(problems, total)}\n` +
    `Returned details: ${preview(details)}`,
  prepareFailed: (name: string, message: string) =>
    `prepareArguments of tool "${boundText(name, 200)}" failed: ${boundText(message)}`,
  prepareTimedOut: (timeoutMs: number) =>
    `it did not finish within ${timeoutMs} ms (timeoutMs, plus workers.loadTimeoutMs for a first import) and was stopped`,
  duplicateCallId: (id: string) =>
    `Not run: an earlier call in this batch has the same id ${JSON.stringify(id.slice(0, 200))}, and results are matched to calls by id. ` +
    'Give each tool call its own id.',
  blocked: (reason: string | undefined) => reason ?? 'Tool call was blocked by beforeToolCall.',
  stoppedBeforeRun: (reason: string | undefined) => `Not run: the run was stopped${reason ? ` (${reason})` : ''}.`,
  rejected: (name: string, reason: string) =>
    `Not run: a person rejected this call of "${name}"${reason ? ` (${reason})` : ''}.`,
  notApproved: (name: string) =>
    `Not run: "${name}" needs a person's approval, and this call has none (pass approvals to executeBatch, or run it through an Agent).`,
  notApprovedBecause: (name: string, why: string) =>
    `Not run: "${name}" needs a person's approval, and ${boundText(why, 1000)}`,
  approvedForAnotherTool: (name: string, approvedFor: string) =>
    `Not run: the approval given for this call was for tool "${boundText(approvedFor, 200)}", but the call is for "${boundText(name, 200)}".`,
  approvedWithoutArguments: (name: string) =>
    `Not run: the approval given for this call of "${boundText(name, 200)}" carries no arguments object.`,
  needsApprovalFailed: (name: string, message: string) => `needsApproval of tool "${name}" failed: ${message}`,
  beforeHookThrew: (message: string) => `beforeToolCall failed: ${message}`,
  afterHookThrew: (message: string) => `afterToolCall failed: ${message}`,
  abortedBeforeStart: () => 'Tool call aborted before it started.',
  abortedWhileRunning: (how: StopHow) =>
    how === 'cooperative'
      ? 'Tool call aborted: the tool stopped when its signal fired.'
      : how === 'unstoppable'
        ? `Tool call aborted: the tool ignored its signal and ${UNSTOPPABLE}`
        : 'Tool call aborted: the tool ignored its signal and was killed after the grace period.',
  timedOut: (timeoutMs: number, how: StopHow) =>
    how === 'cooperative'
      ? `Tool timed out after ${timeoutMs} ms (limit timeoutMs); it stopped when its signal fired.`
      : how === 'unstoppable'
        ? `Tool timed out after ${timeoutMs} ms (limit timeoutMs); it ignored its signal and ${UNSTOPPABLE}`
        : `Tool timed out after ${timeoutMs} ms (limit timeoutMs); it ignored its signal and was killed after the grace period.`,
  memoryLimit: (maxMemoryMb: number) =>
    `Tool reached its memory limit (maxMemoryMb: ${maxMemoryMb} MB) and was stopped.`,
  resultTooLarge: (what: 'result' | 'update', bytes: number, limit: number) =>
    `Tool ${what} is ${bytes} bytes, over the limit maxResultBytes (${limit} bytes).`,
  notCloneable: (what: 'result' | 'update', reason: string) =>
    `Tool ${what} cannot be sent from the worker to the host (${reason}). ` +
    'Return plain data only: no functions, symbols or class instances with methods.',
  invalidResult: (problem: string) => `Tool returned an invalid result: ${problem}.`,
  workerExited: (code: number) => `Tool crashed: its worker exited with code ${code} (process.exit or a fatal error).`,
  workerCrashed: (message: string) => `Tool crashed: ${boundText(message)}`,
  protocolViolation: (problem: string) =>
    `Tool crashed: its worker broke toolpool's protocol (${boundText(problem, 300)}) and was retired. ` +
    "A tool must not post on, close or forge toolpool's channels.",
  sharedWorkerKilled: (why: string) =>
    `Tool call stopped: it shared its worker (concurrency > 1) with a call that ${why}, and the worker was killed with it. ` +
    'Give a tool that must not be stopped by its co-runners the default concurrency 1.',
  sharedWorkerOutOfMemory: (maxMemoryMb: number, others: number) =>
    `Tool reached its memory limit (maxMemoryMb: ${maxMemoryMb} MB) and was stopped; ${others} other call(s) shared its worker ` +
    '(concurrency > 1) and the heap, so any of them may have used the memory.',
  workerRetired: (reason: string) => `Tool call cancelled: its worker was retired (${boundText(reason, 300)}).`,
  workerStuck: () => 'Tool call could not start: the worker it was sent to stayed blocked, so it was retired.',
  invalidArguments: (name: string, message: string) =>
    `The arguments for tool "${boundText(name, 200)}" could not be processed: ${boundText(message, 500)}`,
  notAHostFunction: (name: string) =>
    `Host call ${boundText(name, 100)}() refused: it is not a function the host granted.`,
  hostCallTooLarge: (name: string, bytes: number, limit: number) =>
    `Host call ${boundText(name, 100)}() refused: its arguments are ${bytes} bytes, over the limit maxResultBytes (${limit} bytes).`,
  hostCallsFlooded: (limit: number) =>
    `Host call refused: the tool already has ${limit} host calls waiting; await some before making more.`,
  hostFunctionFailed: (name: string, message: string) =>
    `Host call ${boundText(name, 100)}() failed: ${boundText(message)}`,
  processDied: (signal: string | null, code: number | null) =>
    `Tool crashed: its isolation process died (${signal ? `signal ${signal}` : `exit code ${code}`}).`,
  poolClosed: () => 'Tool call cancelled: the executor was closed.',
  processUnresponsive: (what: string, ms: number) =>
    `Tool crashed: its isolation process did not answer the ${what} request within ${ms} ms, so it was killed and will be restarted.`,
  processKilledForUnstoppable: () =>
    'Tool crashed: its isolation process was SIGKILLed because another call running in it ignored its signal and could not be stopped inside the process (a thread inside a native call); calls running in it were stopped.',
  processOutOfMemory: (maxMemoryMb: number, calls: number) =>
    `Tool crashed: its isolation process reached its memory cap (maxMemoryMb: ${maxMemoryMb} MB per worker, Buffers of all its calls together) while ${calls} calls ran in it, so it ended with all of them; which call used the memory is not known.`,
  processKilledForOther: (reason: string) =>
    `Tool crashed: its isolation process was killed because ${reason}; calls running in it were stopped.`,
  processExhausted: (openFiles: number) =>
    `Tool call cancelled: its isolation process held ${openFiles} open descriptors, left open by tool calls, so it was replaced before they broke its calls.`,
  processBrokeProtocol: (problem: string) =>
    `Tool crashed: its isolation process broke the protocol (${truncate(problem, 300)}) and was killed.`,
  processCouldNotStart: (message: string) =>
    `Tool crashed: the isolation process could not start: ${truncate(message, 2_000)}`,
  relativePathInEmptyFolder: (path: string, hostFolder: string) =>
    ` (The relative path ${JSON.stringify(boundText(path, 300))} did not resolve against the host's working folder: under permissions this tool runs in a process whose working folder is an empty one of its own, ` +
    `so that Node's permission model confines it. Use an absolute path, such as ${JSON.stringify(boundText(`${hostFolder.replace(/\/$/, '')}/${path.replace(/^\.\//, '')}`, 600))}: ` +
    'pass the folder in the arguments or in createExecutor({ env }), and grant it in permissions.fsRead or fsWrite.)',
} as const;

/** Messages about what a Node line cannot enforce, or what a tier cannot give, and what the permissions refused. */
export const PermissionErrors = {
  fsDenied: (verb: 'read' | 'write', path: string, option: 'fsRead' | 'fsWrite', flag: string) =>
    `Access denied: the tool may not ${verb} ${path ? JSON.stringify(boundText(path, 500)) : 'that path'} (Node's permission model, ERR_ACCESS_DENIED). ` +
    `To allow it, add the path or a folder that holds it to permissions.${option} (toolpool serve: ${flag}).`,
  netDenied: (target: string) =>
    `Access denied: the tool may not reach ${boundText(target, 300)} (Node's permission model, ERR_ACCESS_DENIED: permissions.net is not true). ` +
    'To allow the network, set permissions.net: true, or use isolation: "sandbox" with permissions.net listing "host:port".',
  featureDenied: (what: string) =>
    `Access denied: ${what} is not allowed to a tool under permissions (Node's permission model, ERR_ACCESS_DENIED); no option grants it. ` +
    'Run such a tool without permissions, or in isolation: "sandbox".',
  netListNeedsSandbox: (tier: string) =>
    `createExecutor: option permissions.net lists hosts, which only isolation "sandbox" can enforce (tools here run in the ${tier} tier). ` +
    'Use isolation: "sandbox", or permissions.net: true / false.',
  netFalseNotEnforceable: (version: string) =>
    `createExecutor: option permissions.net: false cannot be enforced on Node ${version}: a network permission exists only on Node 25+. ` +
    'Run on Node 25 or later, use isolation: "sandbox" (no network unless listed), or leave permissions.net out to accept that tools can reach the network.',
  linkLeavesRoots: (link: string, target: string, option: 'fsRead' | 'fsWrite') =>
    `createExecutor: permissions.${option} holds a symbolic link, ${JSON.stringify(boundText(link, 500))}, that leads outside the granted roots (to ${JSON.stringify(boundText(target, 500))}); ` +
    "Node's permission model follows it, so a tool could " +
    (option === 'fsWrite' ? 'write' : 'read') +
    ' there. ' +
    `Remove the link, grant its target in permissions.${option} too, or use isolation: "sandbox" (where a link leads only inside the sandbox).`,
  writeOverlapsCache: (path: string, cache: string) =>
    `createExecutor: option permissions.fsWrite ${path} reaches into toolpool's cache ${cache} (it contains it or lies inside it); a tool could replace the code a later executor or toolpool command runs. ` +
    'Grant a folder outside it.',
} as const;

/**
 * The sandbox tier's messages: what is missing, how to get it, and which
 * tier to use until then.
 */
export const SandboxErrors = {
  socketPathTooLong: (path: string, bytes: number) =>
    `the sandbox cannot listen at ${path}: a Unix socket path may have at most 107 bytes, and this one has ${bytes} ` +
    '(the temporary folder is deep). Set TMPDIR to a shorter folder, such as /tmp.',
  probeUnanswered: (bwrap: string, why: string) =>
    `bubblewrap (${bwrap}) gave no lasting answer to its probe (${why}), so the child was not started ` +
    'without the PID namespace it gives; the next call asks again (is the machine short of processes, memory or descriptors?)',
  notLinux: (platform: string) =>
    `createExecutor: isolation "sandbox" runs tools inside bubblewrap, which needs Linux (this is ${platform}). ` +
    'Use isolation: "process" here.',
  bwrapMissing: () =>
    'createExecutor: isolation "sandbox" needs bubblewrap (the bwrap command), which was not found on PATH. ' +
    'Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) ' +
    'or use isolation: "process" meanwhile.',
  bwrapRefused: (bwrap: string, reason: string) =>
    `createExecutor: isolation "sandbox" needs bubblewrap, but ${bwrap} could not create a sandbox (${reason}). ` +
    'The kernel may refuse user namespaces: check sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone, ' +
    'or the AppArmor user-namespace restriction on Ubuntu 24.04+. Use isolation: "process" meanwhile.',
  notAccessibleAsNobody: (problem: string) =>
    `isolation "sandbox": ${problem}. The host runs as root, so each module's sandbox runs as a uid of its own in group 65534, never as host root; ` +
    'give them access (chgrp 65534 and g+rwx, or o+rwx, for a shared fsWrite folder; g+rx or o+rx for fsRead), or run the host as another user.',
  sharedNotInFsWrite: (path: string) =>
    `createExecutor: permissions.fsWriteShared ${path} is not in permissions.fsWrite; list it in both to share that folder between modules`,
  badNetEntry: (entry: string, problem: string) =>
    `createExecutor: permissions.net entry ${JSON.stringify(entry).slice(0, 200)} ${problem}`,
  netRefused: (target: string) => `toolpool sandbox: ${target} is not in permissions.net`,
  netUnreachable: (target: string) =>
    `(The tool runs in toolpool's sandbox, where only the "host:port" entries of permissions.net can be reached, and ${boundText(target, 300)} is not one of them: ` +
    'add it to permissions.net if the tool should reach it.)',
} as const;

/**
 * The MCP client's messages (`createExecutor({ mcpServers })`): what a
 * server did, named by the server, and for configuration what to change.
 * A server is third-party code: every text taken from it is bounded.
 */
export const McpErrors = {
  sdkMissing: (message: string) =>
    `createExecutor: option mcpServers could not load the MCP client (@modelcontextprotocol/client, a dependency of toolpool; reinstall toolpool): ${boundText(message, 300)}`,
  badServerName: (name: string) =>
    `createExecutor: MCP server name ${JSON.stringify(boundText(name, 100))} must be 1-${MCP_NAME_CHARS} letters, digits, "_" or "-" ` +
    '(its tools are named NAME_tool, and models accept only those characters).',
  commandOrUrl: (name: string, both: boolean) =>
    `createExecutor: MCP server "${name}" ${both ? 'has both command and url; give one' : 'needs a command (a server toolpool starts) or a url (a Streamable HTTP server)'}.`,
  keysNeedCommand: (name: string, keys: string[]) =>
    `createExecutor: MCP server "${name}" has a url, so ${keys.join(', ')} ${keys.length === 1 ? 'does' : 'do'} not apply: ` +
    'they are for servers toolpool starts with command. Leave them out.',
  badUrl: (name: string, url: string) =>
    `createExecutor: MCP server "${name}" has url ${JSON.stringify(boundText(url, 300))}, which is not an http:// or https:// URL.`,
  permissionsNeedSandbox: (name: string) =>
    `createExecutor: MCP server "${name}" has permissions, which only isolation "sandbox" can enforce: ` +
    'a server with isolation "process" has the rights of this process\'s user. Drop isolation: "process", or drop permissions.',
  badPermissions: (name: string, message: string) =>
    `createExecutor: MCP server "${name}": ${message.replace(/^createExecutor: /, '')}`,
  sandboxUnavailable: (name: string, message: string) =>
    `createExecutor: MCP server "${name}" runs in the sandbox tier by default, and ${message.replace(/^createExecutor: /, '')} ` +
    `To run it without a sandbox, give it isolation: "process".`,
  commandNotFound: (name: string, command: string, isPath: boolean) =>
    `createExecutor: MCP server "${name}": the command ${JSON.stringify(boundText(command, 300))} ` +
    (isPath ? 'does not exist or is not executable.' : 'was not found on PATH. Give its full path, or install it.'),
  couldNotStart: (name: string, message: string) =>
    `createExecutor: MCP server "${name}" could not be started: ${boundText(message, 1000)}`,
  exitedAtStart: (name: string, exit: string, stderr: string) =>
    `createExecutor: MCP server "${name}" exited (${exit}) before it answered initialize.${stderrNote(stderr)}`,
  initializeTimedOut: (name: string, ms: number, what: string) =>
    `createExecutor: MCP server "${name}" did not answer ${what} within ${ms} ms (workers.loadTimeoutMs), so it was stopped. ` +
    'Is it an MCP server speaking on stdout, and does it start that slowly?',
  refused: (name: string, url: string, status: number) =>
    `createExecutor: MCP server "${name}" (${boundText(url, 300)}) answered HTTP ${status} ${status === 401 ? '(Unauthorized)' : '(Forbidden)'}: ` +
    'it needs credentials. Give them in headers, e.g. headers: { Authorization: "Bearer <token>" }.',
  startFailed: (name: string, message: string) =>
    `createExecutor: MCP server "${name}" failed to start: ${boundText(message, 1000)}`,
  toolSkipped: (server: string, tool: string, problem: string) =>
    `toolpool: MCP server "${server}": its tool ${JSON.stringify(boundText(tool, 200))} is left out: ${boundText(problem, 1000)}`,
  toolNameInvalid: (name: string) =>
    `its executor name ${JSON.stringify(boundText(name, 200))} is not 1-64 letters, digits, "_" or "-" (models accept no other); a shorter server name may help`,
  listFailed: (server: string, message: string) =>
    `toolpool: MCP server "${server}" announced a new tool list, but tools/list failed (${boundText(message, 500)}); its tools stay as they were.`,
  // Error results, read by the model.
  callFailed: (server: string, message: string) =>
    `MCP server "${server}" could not run the call: ${boundText(message, 2000)}`,
  failedWithoutText: (server: string) => `MCP server "${server}" reported an error without a message.`,
  exitedDuringCall: (server: string, exit: string, stderr: string) =>
    `Tool crashed: MCP server "${server}" exited (${exit}) during the call; toolpool restarts it for later calls.` +
    stderrNote(stderr),
  /** `modern`: the session speaks 2026-07-28, which cancels without notifications/cancelled over HTTP and has no ping. */
  stopped: (server: string, what: string, answered: boolean, graceMs: number, killable: boolean, modern = false) =>
    `${what}; toolpool ${modern ? 'cancelled the request on' : 'sent notifications/cancelled to'} MCP server "${server}". ` +
    (answered
      ? `The server still answers (it answered ${modern ? 'server/discover' : 'a ping'}), so it was left running.`
      : `It did not answer ${modern ? 'server/discover' : 'a ping'} within ${graceMs} ms (abortGraceMs)` +
        (killable
          ? ', so it was killed with everything it started, and is restarted for later calls.'
          : '; its session was dropped, and later calls open a new one.')),
  killedForOther: (server: string) =>
    `Tool call stopped: MCP server "${server}" was killed because it stopped answering during another call; it is restarted for later calls.`,
  brokeProtocol: (server: string, problem: string, killable: boolean) =>
    `Tool crashed: MCP server "${server}" ${boundText(problem, 300)}, ` +
    (killable
      ? 'so it was killed; it is restarted for later calls.'
      : 'so its session was dropped; later calls open a new one.'),
  /** What a server broke when one of its messages (a stdio line, an HTTP body or event) passed the bound. */
  messageTooLong: (maxBytes: number) => `sent a message longer than ${maxBytes} bytes`,
  gaveUp: (server: string, times: number, last: string) =>
    `MCP server "${server}" failed ${times} times in a row (last: ${boundText(last, 1000)}), so toolpool no longer restarts it. ` +
    'Fix the server, then create the executor again.',
  restartFailed: (server: string, message: string) =>
    `MCP server "${server}" could not be restarted: ${boundText(message.replace(/^createExecutor: /, ''), 2000)}`,
} as const;

/** Longest MCP server name: the name and a tool name share the 64 characters of an executor tool name. */
export const MCP_NAME_CHARS = 48;

/** The end of a server's stderr, as a sentence to append. */
function stderrNote(stderr: string): string {
  const tail = stderr.trim();
  return tail === '' ? ' It wrote nothing to stderr.' : ` The end of its stderr: ${boundText(tail.slice(-1000), 1000)}`;
}

/** The agent loop's messages. Texts that end up in a tool result are read by the model. */
export const AgentErrors = {
  busy: () =>
    'Agent.prompt: a run is already in progress. Await it, add to it with agent.steer(text), or call agent.abort() first.',
  badOption: (option: string, problem: string) => `new Agent: option ${option} ${problem}`,
  badPrompt: (method: string) => `Agent.${method}: pass a string or an array of text and image parts`,
  argumentsCutOff: (name: string) =>
    `Not run: your output hit the token limit while you were writing the arguments for "${name}", so they may be incomplete. ` +
    'Call the tool again with complete arguments.',
  notRunAborted: () => 'Not run: the run was aborted.',
  notRunModelFailed: (message: string) => `Not run: the model turn failed (${message}).`,
  notRunRunEnded: (message: string) => `Not run: the run ended (${message}).`,
  modelThrew: (message: string) => `The model failed: ${message}`,
  modelEndedWithoutDone: () => 'The model stream ended without a final message.',
  modelTurnFailed: () => 'The model turn failed.',
  messageAborted: () => 'The run was aborted while the model was answering; this message is cut off.',
  pendingApprovals: (ids: string[]) =>
    `Agent.prompt: tool calls wait for approval (${ids.join(', ')}). Call agent.resume({ approved, rejected }) first, or agent.abort() to answer them with an error.`,
  nothingToResume: () =>
    'Agent.resume: no tool call waits for approval, so there is nothing to resume. Use agent.prompt(text).',
  resumeBusy: () => 'Agent.resume: a run is already in progress. Await it first.',
  notPending: (id: string, pending: string[]) =>
    `Agent.resume: tool call "${id}" is not waiting for approval. Waiting: ${pending.length ? pending.join(', ') : '(none)'}.`,
  approvedAndRejected: (id: string) => `Agent.resume: tool call "${id}" is both approved and rejected; decide once.`,
  badDecisions: (problem: string) => `Agent.resume: ${problem}`,
  snapshotWhileRunning: () =>
    'Agent.snapshot: a run is in progress; take the snapshot once prompt() or resume() has resolved.',
  pendingCallMismatch: (id: string, problem: string) =>
    `approval of tool call ${JSON.stringify(boundText(id, 100))} does not match the transcript: ${problem}`,
  pendingToolMismatch: (named: string, called: string) =>
    `it is for tool "${boundText(named, 200)}", but the call is for "${boundText(called, 200)}"`,
  pendingArgumentsMismatch: () => 'its arguments are not those of its tool call',
  pendingArgumentsInvalid: (message: string) =>
    `its arguments do not fit the tool's schema (${boundText(message, 500)})`,
  pendingToolUnknown: (name: string) => `there is no tool "${boundText(name, 200)}"`,
  pendingNotGated: (name: string) =>
    `tool "${boundText(name, 200)}" needs no approval, so no call of it was ever pending`,
  snapshotUnsigned: () =>
    'new Agent: option snapshot carries no integrity check, and this agent has a snapshotSecret: take the snapshot from an agent with the same snapshotSecret.',
  snapshotTampered: () =>
    'new Agent: option snapshot failed its integrity check: it was changed after it was taken, or taken by an agent with another snapshotSecret. Nothing of it was used.',
  badSnapshot: (problem: string) => `new Agent: option snapshot is not an agent snapshot: ${problem}`,
  snapshotVersion: (found: unknown, supported: number) =>
    `new Agent: option snapshot has version ${JSON.stringify(found)}, and this toolpool reads version ${supported} only. ` +
    'Resume it with the toolpool version that wrote it, or start a new agent.',
  executorFailed: (message: string) => `The tools could not run: ${message}`,
  internal: (message: string) => `The agent loop failed: ${message}`,
} as const;

type StopHow = 'cooperative' | 'killed' | 'unstoppable';

/** A worker thread inside a native call: Node cannot terminate it until that call returns. */
const UNSTOPPABLE =
  'could not be stopped: its thread is inside a native call that Node cannot interrupt, and still runs until that call returns ' +
  '(it counts against workers.max until then). A process can be killed: run such a tool with isolation "process" or "sandbox".';

/** The error text for a call ended by a timeout or an abort, saying which step of the stop ended it. */
export function stopMessage(reason: 'timeout' | 'aborted', how: StopHow | 'before-start', timeoutMs: number): string {
  if (how === 'before-start') return ToolErrors.abortedBeforeStart();
  return reason === 'timeout' ? ToolErrors.timedOut(timeoutMs, how) : ToolErrors.abortedWhileRunning(how);
}

/** Errors thrown to the caller for bad configuration: they name the problem and the fix. */
export const ConfigErrors = {
  moduleNotFound: (module: string) =>
    `Tool module ${module} could not be found. Check the path or URL passed in createExecutor({ tools }).`,
  moduleExitedAtImport: (module: string, code: number) =>
    `Tool module ${module} failed to load: its worker ended with exit code ${code} while the module was being imported ` +
    '(a process.exit() at its top level, or something it imports). A tool module must only define its tool when imported.',
  moduleFailedToLoad: (module: string, message: string) => `Tool module ${module} failed to load: ${message}`,
  loadTimedOut: (module: string, timeoutMs: number) =>
    `Tool module ${module} did not finish loading within ${timeoutMs} ms (workers.loadTimeoutMs); does it run a loop or wait at import time?`,
  listedToolNotConfirmed: (module: string) =>
    `Tool module ${module} was listed from the listing cache and is still being loaded; this call should have waited for it (a toolpool bug).`,
  listedToolChanged: (module: string, name: string) =>
    `Tool module ${module} was listed as "${name}" from the listing cache, but its worker now describes another tool; restart the server to list it as it is.`,
  syntaxErrorAt: (message: string, file: string, line: number, column: number) =>
    `${message} (syntax error at ${file}:${line}:${column})`,
  noToolModulesIn: (folder: string) =>
    `The folder ${folder} has no tool modules: toolpool loads its .ts, .mts, .js and .mjs files and those of its subfolders, ` +
    'except names starting with "_" or ".", tests, declarations and the folders lib and node_modules.',
  skippedModules: (files: string[]) =>
    `toolpool: skipped ${files.length} module(s) of a tools folder whose default export is not a tool (helpers?): ${boundText(files.join(', '), 2000)}. ` +
    'Name helpers with a leading "_" or put them in a lib/ folder to leave them out unread.',
  noDefaultTool: (module: string) =>
    `Tool module ${module} has no default export made with defineTool(). Add \`export default defineTool({ ... })\`.`,
  invalidToolField: (where: string, problem: string) => `Tool ${where} is invalid: ${problem}`,
  schemaWarning: (message: string) =>
    `toolpool: ${message} (a format toolpool does not know is shown to the model but not checked)`,
  patternNotLinear: (pattern: string, reason: string) =>
    `pattern ${preview(pattern, 200)} cannot run in linear time (${reason}). A tool module's patterns are matched with RE2, so a hostile schema cannot stall the host: rewrite it without lookaround or backreferences, or make the tool inline.`,
  invalidSchema: (where: string, message: string) => `Tool ${where} has an invalid parameters schema: ${message}`,
  invalidOutputSchema: (where: string, message: string) => `Tool ${where} has an invalid outputSchema: ${message}`,
  notASchema: (what: string, hint: string) =>
    `"parameters" is ${what}, not a schema toolpool can use. ${hint ? `${hint} ` : ''}` +
    'It takes a TypeBox schema (Type.Object({ ... }) from @sinclair/typebox 0.32-0.34 or typebox 1.x), ' +
    'a Standard Schema that gives a JSON Schema (Zod 4, ArkType 2, Valibot through toStandardJsonSchema() from @valibot/to-json-schema) ' +
    'or a JSON Schema object with type "object".',
  notConvertible: (vendor: string, message: string) =>
    `${vendor} could not turn it into a JSON Schema for the model (${message})`,
  badDefinition: (name: unknown, problem: string) =>
    `defineTool(${typeof name === 'string' ? JSON.stringify(name.slice(0, 100)) : '{ ... }'}): ${problem}`,
  noExecute: () => '"execute" must be a function execute(args, ctx) that runs the tool (it is missing)',
  duplicateName: (name: string, first: string, second: string) =>
    `Two tools are named "${name}" (${first} and ${second}). Tool names must be unique.`,
  shadowedServerTool: (name: string, own: string, hidden: string) =>
    `${boundText(hidden, 200)} now lists a tool named "${boundText(name, 100)}", which ${own} already has: that server tool is left out. Rename the tool or the server.`,
  unknownModuleEntryKey: (index: number, key: string, known: string[]) =>
    `createExecutor({ tools }): tools[${index}] has an unknown key "${boundText(key, 100)}"; a module entry may have ${known.join(', ')}.`,
  badTrustDomain: (index: number, value: unknown) =>
    `createExecutor({ tools }): tools[${index}].trustDomain must be a name of 1-200 characters (modules with the same name share workers), got ${preview(value, 80)}.`,
  badToolEntry: (index: number, received: string) =>
    `createExecutor({ tools }): entry ${index} is ${received}; expected a module path, a file URL or a defineTool() object.`,
  badOption: (option: string, problem: string) => `createExecutor: option ${option} ${problem}`,
  /** Every problem the options schema found, in one message. */
  badOptions: (problems: string[]) => `createExecutor: ${problems.join('; ')}`,
  unknownOption: (path: string, parent: string, known: string[], nearest?: string) =>
    `unknown option "${path}"; ${nearest === undefined ? '' : `did you mean "${parent ? `${parent}.` : ''}${nearest}"? `}the known options${parent ? ` of ${parent}` : ''} are ${known.join(', ')}`,
  missingOption: (field: string, expected: string) => `${field} must be ${expected} (it is missing)`,
  noTools: (missingTools: string) => `createExecutor: ${missingTools}, or give mcpServers`,
  moreProblems: (count: number) => `and ${count} more problems`,
  wrongOption: (field: string, expected: string, received: string) => `${field} must be ${expected} (got ${received})`,
  closed: () => 'This executor is closed; create a new one with createExecutor().',
  unknownExecutorEvent: (type: string, known: string[]) =>
    `executor.on(${JSON.stringify(boundText(type, 100))}, listener): no such event; the events are ${known.join(', ')} (a call's events come through subscribe()).`,
  listenerThrew: (message: string, where: { addedAt?: string; once: boolean }) =>
    `toolpool: an event listener threw: ${message}${where.addedAt ? ` (the listener was subscribed at ${where.addedAt})` : ''}.` +
    (where.once
      ? ' Further errors of this listener are not reported; catch them in the listener to see each one.'
      : ''),
  unknownToolLimits: (names: string[], known: string[]) =>
    `createExecutor: option toolLimits names ${names.length === 1 ? 'a tool' : 'tools'} that ${names.length === 1 ? 'does' : 'do'} not exist: ` +
    `${boundText(names.map((name) => JSON.stringify(name)).join(', '), 500)}. The tools are ${known.length ? boundText(known.join(', '), 2000) : '(none)'}.`,
  badToolCalls: (problem: string) => `executeBatch: ${problem}`,
  badBatchOption: (option: string, problem: string) => `executeBatch: option ${option} ${problem}`,
} as const;

/** Messages about how the package itself is used. */
export const PackageErrors = {
  /** Thrown by cjs/require-error.cjs, which repeats it (CommonJS cannot load this module on Node 20). */
  requireNotSupported: () =>
    'toolpool is an ES module package and cannot be loaded with require(). ' +
    "Use import instead: `import { createExecutor, defineTool } from 'toolpool'` in an ES module " +
    '(a .mjs file, or "type": "module" in your package.json), or `const toolpool = await import(\'toolpool\')` from CommonJS.',
} as const;

/**
 * The text of a thrown value; never throws itself, whatever was thrown
 * (getters, odd toString). An error's `cause` is kept (a few levels deep,
 * bounded): "fetch failed" alone does not say what failed. A denial by
 * Node's permission model is told as what to change in toolpool's options.
 */
export function errorMessage(error: unknown): string {
  try {
    return boundText(thrownText(error, 0));
  } catch {
    return 'an error that cannot be read';
  }
}

/** How many causes deep an error text goes. */
const MAX_CAUSES = 3;

function thrownText(error: unknown, depth: number): string {
  if (!(error instanceof Error)) return typeof error === 'string' ? error : preview(error, MAX_TEXT);
  const own = accessDenied(error) ?? String(error.message || error.name);
  const cause = depth < MAX_CAUSES ? causeOf(error) : undefined;
  if (cause === undefined) return own;
  const because = boundText(thrownText(cause, depth + 1), 1000);
  return because === own ? own : `${own} (cause: ${because})`;
}

function causeOf(error: Error): unknown {
  try {
    return error.cause;
  } catch {
    return undefined; // a getter that throws: no cause worth telling
  }
}

/** Node's ERR_ACCESS_DENIED, told as the option that would allow it; undefined for any other error. */
function accessDenied(error: Error): string | undefined {
  const fields = error as Error & {
    code?: unknown;
    permission?: unknown;
    resource?: unknown;
    syscall?: unknown;
    errno?: unknown;
  };
  if (fields.code !== 'ERR_ACCESS_DENIED') return undefined;
  const permission = fields.permission ?? (fields.errno as { permission?: unknown } | undefined)?.permission;
  const resource = typeof fields.resource === 'string' ? fields.resource : '';
  if (permission === 'FileSystemRead') return PermissionErrors.fsDenied('read', resource, 'fsRead', '--allow-read');
  if (permission === 'FileSystemWrite') return PermissionErrors.fsDenied('write', resource, 'fsWrite', '--allow-write');
  if (permission === 'Net' || typeof fields.syscall === 'string') return PermissionErrors.netDenied(netTarget(error));
  if (typeof permission === 'string' && Object.hasOwn(DENIED_FEATURES, permission))
    return PermissionErrors.featureDenied(DENIED_FEATURES[permission]!);
  return undefined;
}

/** Node's names for what its permission model guards besides files and the network. */
const DENIED_FEATURES: Record<string, string> = {
  ChildProcess: 'starting a child process',
  WorkerThreads: 'starting a worker thread',
  Addon: 'loading a native addon',
  WASI: 'using WASI',
  Inspector: 'opening the inspector',
};

function netTarget(error: Error): string {
  const { hostname, address, port } = error as Error & { hostname?: unknown; address?: unknown; port?: unknown };
  const host = typeof hostname === 'string' ? hostname : typeof address === 'string' ? address : 'the network';
  return typeof port === 'number' ? `${host}:${port}` : host;
}

/**
 * Every text made from something a tool or a model controls is bounded: an
 * error result is read by a model and kept in a transcript, so a 30 MB
 * error text or a 1 MB tool name must not become one.
 */
export const MAX_TEXT = 4096;
const MAX_PROBLEMS = 20;

function listProblems(problems: string[], total: number): string {
  const shown = problems.slice(0, MAX_PROBLEMS).map((p) => `  - ${boundText(p, 300)}`);
  if (total > shown.length) shown.push(`  - … and ${total - shown.length} more`);
  return shown.join('\n');
}

export function boundText(text: string, max = MAX_TEXT): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

export function preview(value: unknown, max = 500): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    try {
      text = String(value);
    } catch {
      text = '(a value that cannot be shown)';
    }
  }
  return truncate(text, max);
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** What the toolpool command says about its command line. */
export const CliErrors = {
  unknownFlagNear: (flag: string, nearest: string) => `unknown option ${flag}; did you mean ${nearest}?`,
  unknownFlag: (flag: string, known: string[]) => `unknown option ${flag}; the options are ${known.join(', ')}`,
  mcpConfigUnreadable: (file: string, message: string) => `--mcp-config ${file}: cannot read it (${message})`,
  mcpConfigNotJson: (file: string, message: string) => `--mcp-config ${file}: not valid JSON (${message})`,
  mcpConfigShape: (file: string) =>
    `--mcp-config ${file}: expected { "mcpServers": { "<name>": { "command": ..., "args": [...], "env": {...} } } }, ` +
    'as Claude Desktop, Cursor and VS Code write it (toolpool adds "isolation" and "permissions"; a server may have "url" instead of "command")',
  mcpConfigType: (file: string, name: string, type: string) =>
    `--mcp-config ${file}: server "${name}" has type ${JSON.stringify(type)}; toolpool speaks "stdio" (with command) and "http" (Streamable HTTP, with url)`,
} as const;

/**
 * toolpool/bullmq's messages. Those that end a call are read by a model on
 * the host: they say where the call was (the queue, Redis, a worker
 * machine) and whether it may have run; `where` is a Redis address without
 * its password.
 */
/** What to look at when Redis does not answer. */
function redisCheck(where: string): string {
  return `Check that redis-server runs at ${where} and that this machine can reach it (host, port, firewall, password, TLS).`;
}

export const RemoteErrors = {
  // On the host.
  redisDownBeforeSend: (queue: string, where: string, reason: string) =>
    `Not run: Redis at ${where} (BullMQ queue "${boundText(queue, 200)}") is unreachable (${boundText(reason, 300)}), so the call could not be sent to a worker machine. ` +
    redisCheck(where),
  redisUnreachableAtStart: (queue: string, where: string, reason: string, waitedMs: number) =>
    `toolpool/bullmq: remoteRunner could not reach Redis at ${where} (BullMQ queue "${boundText(queue, 200)}") within ${waitedMs} ms (${boundText(reason, 300)}). ` +
    `Calls of module tools fail fast until it answers. ${redisCheck(where)}`,
  redisNoAnswer: (ms: number) => `no answer within ${ms} ms, connectTimeoutMs`,
  redisDownWhileOut: (queue: string, where: string, reason: string) =>
    `Tool call failed: Redis at ${where} (BullMQ queue "${boundText(queue, 200)}") became unreachable while the call was out (${boundText(reason, 300)}), so its result cannot be read. ` +
    'It may have run on a worker machine; it will not be run again.',
  noWorkers: (queue: string, waitedMs: number) =>
    `Not run: no worker machine served BullMQ queue "${boundText(queue, 200)}" for ${Math.round(waitedMs)} ms, so the call was taken off the queue. ` +
    `Start one: toolpool worker --redis <url> --queue ${boundText(queue, 200)} --tools <folder>.`,
  machineLost: (queue: string, lostAfterMs: number) =>
    `Tool call failed: the worker machine running it stopped answering (no heartbeat for ${lostAfterMs} ms, lostAfterMs; BullMQ queue "${boundText(queue, 200)}"). ` +
    'It was not finished and will not be run again.',
  noAnswerAfterTimeout: (timeoutMs: number) =>
    `Tool timed out after ${timeoutMs} ms (limit timeoutMs); the worker machine running it did not answer within the grace period after that, and was asked to stop it.`,
  noAnswerAfterAbort: () =>
    'Tool call aborted; the worker machine running it did not confirm the stop within the grace period, and was asked to stop it.',
  removedFromQueue: (queue: string) =>
    `Not run: its job was removed from BullMQ queue "${boundText(queue, 200)}" before a worker machine took it.`,
  badAnswer: (queue: string, problem: string) =>
    `Tool call failed: the worker machine answered with something that is not a toolpool answer (${boundText(problem, 300)}). ` +
    `Is a worker other than \`toolpool worker\` / serveQueue taking jobs from BullMQ queue "${boundText(queue, 200)}"?`,
  jobFailed: (queue: string, reason: string) =>
    `Tool call failed: its BullMQ job failed on queue "${boundText(queue, 200)}" (${boundText(reason, 1000)}).`,
  // On a worker machine: the answer of a job it refuses.
  notACall: (problem: string) => `Not run: the job is not a toolpool call (${boundText(problem, 300)}).`,
  startedBefore: () =>
    'Not run again: this call already started once, on a worker machine that stopped answering. toolpool runs a call at most once.',
  toolMissing: (tool: string, available: string[]) =>
    `Not run: this worker machine has no tool "${boundText(tool, 200)}" (it has: ${available.length ? boundText(available.join(', '), 2000) : 'none'}). ` +
    `Start its toolpool worker with the module of "${boundText(tool, 200)}" in --tools.`,
  versionsDiffer: (tool: string, hostHash: string, ownHash: string | undefined) =>
    `Not run: the versions differ: this worker machine's copy of tool "${boundText(tool, 200)}" is not the module the host has ` +
    `(module hash ${ownHash === undefined ? 'none: the tool is inline here' : ownHash.slice(0, 12)} here, ${boundText(hostHash, 64).slice(0, 12)} on the host). ` +
    'Deploy the same version of the module on the host and on every worker machine.',
  isolationTooWeak: (tool: string, wanted: string, own: string | undefined) =>
    `Not run: tool "${boundText(tool, 200)}" must run in the "${wanted}" tier or a stronger one (the host's isolation), and this worker machine runs it ` +
    `${own === undefined ? 'inline, on its main thread' : `in the "${own}" tier`}. Start the worker with --isolation ${wanted} (or stronger).`,
  stopping: () => 'Not run: the worker machine that took it was shutting down.',
  hostGaveUp: () =>
    'Not run: the host that sent this call no longer waits for it (it gave up on it, e.g. Redis was unreachable past lostAfterMs, and told its model the call failed).',
  hostUnknown: (reason: string) =>
    `Not run: could not check with Redis that the host still waits for this call (${boundText(reason, 300)}).`,
  // What a worker machine says about its connection (`toolpool worker` logs it).
  workerLostRedis: (where: string, reason: string) =>
    `Redis at ${where} is unreachable (${boundText(reason, 300)}); reconnecting, calls wait until it is back`,
  workerRedisBack: (where: string) => `Redis at ${where} is back`,
  shutDown: (detail: string) =>
    `Tool call stopped: the worker machine running it was shut down (${boundText(detail, 500)}).`,
  // Thrown for bad options.
  badConnection: (problem: string) =>
    `toolpool/bullmq: connection ${problem}; give a redis:// or rediss:// URL, or { host, port, username?, password?, db?, tls? }.`,
  badOption: (fn: string, option: string, problem: string) => `toolpool/bullmq: ${fn}({ ${option} }) ${problem}`,
} as const;

/** What the adapters (toolpool/mcp, toolpool/ai-sdk, `toolpool serve`) say outside a tool result. */
export const AdapterErrors = {
  httpNotFound: (path: string) => `Not found: ${path}. The MCP endpoint is /mcp.`,
  httpForbiddenHost: (host: string) =>
    `Forbidden: Host "${host}" is not this machine. toolpool serve --http answers only requests to 127.0.0.1, localhost or [::1].`,
  httpForbiddenOrigin: (origin: string) =>
    `Forbidden: Origin "${origin}" is not a local page. toolpool serve --http answers only local clients.`,
  httpSessionNotFound: () =>
    'Session not found: it was closed or never existed. Start a new session with an initialize request.',
  httpFailed: (message: string) => `The MCP request failed: ${message}`,
  httpBodyTooLarge: (limit: number) => `Payload Too Large: a request body may have at most ${limit} bytes.`,
  mcpSdkMissing: (message: string) =>
    `toolpool serve needs the MCP SDK: npm install @modelcontextprotocol/sdk (${message})`,
  cannotServeModern: (message: string) =>
    `toolpool serve cannot serve this client: it speaks the 2026-07-28 MCP revision, and the MCP SDK v2 server (@modelcontextprotocol/server) did not load (${message}). Reinstall toolpool's dependencies (npm ci), or use a client of an earlier revision.`,
  bullmqMissing: (message: string) =>
    `toolpool worker needs BullMQ and ioredis: npm install bullmq ioredis (${message})`,
  // The rest of a "Not run: "tool" needs a person's approval, and ..." error result.
  elicitationUnsupported: (client: string | undefined) =>
    `${quotedClient(client)} cannot ask for it: the client does not support MCP elicitation (form mode), which is how toolpool asks. ` +
    'Use an MCP client that supports elicitation, or serve this tool without needsApproval.',
  approvalForOtherCall: () =>
    'the answer the client sent back was given for another call (other arguments than the person was shown), so it did not run. Call the tool again to be asked again.',
  elicitationFailed: (client: string | undefined, message: string) =>
    `asking for it through ${quotedClient(client)} failed (${boundText(message, 500)}), so it did not run. Call the tool again to be asked again.`,
  /** The reason of a rejection, shown as "a person rejected this call of "tool" (reason)". */
  declinedInClient: (client: string | undefined, dismissed: boolean) =>
    dismissed ? `the approval request in ${quotedClient(client)} was dismissed` : `declined in ${quotedClient(client)}`,
  aiSdkNotAsked: () =>
    'the AI SDK ran it without asking: a toolApproval setting for this tool took the place of its needsApproval. ' +
    "Leave the tool out of toolApproval (aiSdkTools sets its needsApproval), or set it to 'user-approval'.",
  /** The question MCP elicitation shows to the person: the tool and the arguments exactly as they would run. */
  approvalQuestion: (tool: string, label: string | undefined, args: unknown) =>
    `Allow the tool ${label !== undefined ? `"${boundText(label, 200)}" (${tool})` : `"${tool}"`} to run with these arguments?\n` +
    truncate(JSON.stringify(args, null, 2), 4000),
} as const;

/** The client as it named itself in `initialize`, when it did. */
function quotedClient(client: string | undefined): string {
  return client === undefined ? 'the MCP client' : `the MCP client "${boundText(client, 100)}"`;
}

/** What a tool's `ctx.elicit` is told when its question gets no answer (TOOLPOOL_ERR_ELICITATION); an uncaught one becomes the call's error text. */
export const ElicitErrors = {
  noHandler: (tool: string) =>
    `Tool "${boundText(tool, 200)}" asked the person a question (ctx.elicit), but no one can answer it here: ` +
    'pass createExecutor({ onElicit }) (or new Agent({ onElicit })), run it under `toolpool run` on a terminal, ' +
    'or serve it to an MCP client that supports elicitation.',
  clientCannotAnswer: (client: string | undefined) =>
    `The tool asked the person a question (ctx.elicit), but ${quotedClient(client)} does not support MCP elicitation (form mode), so no one can answer it. ` +
    'Use an MCP client that supports elicitation.',
  invalidRequest: (problem: string) => `ctx.elicit() refused: ${boundText(problem, 300)}.`,
  alreadyAsking: () =>
    'ctx.elicit() refused: this call is already asking the person a question; await its answer before asking another.',
  ended: () => 'ctx.elicit() ended: the tool call was stopped or ended while the person was being asked.',
  failed: (message: string) => `ctx.elicit() failed: the one answering threw (${boundText(message, 500)}).`,
  invalidAnswer: (problem: string) => `ctx.elicit() got an answer it cannot use: ${boundText(problem, 300)}.`,
} as const;

/** What a ledger (createExecutor({ ledger })) says; the texts that end a call are read by a model. */
export const LedgerErrors = {
  mayHaveRun: (tool: string, runId: string, callId: string, startedAt: number, startedBy: string) =>
    `Not run again: this call of "${boundText(tool, 200)}" (run ${JSON.stringify(boundText(runId, 200))}, call ${JSON.stringify(boundText(callId, 200))}) ` +
    `started at ${new Date(startedAt).toISOString()} on ${boundText(startedBy, 300)} and its end was never recorded: it may already have run ` +
    '(its host may have stopped, or may be running it now). It was not run again, so it cannot run twice; check its effect before calling it with a new id.',
  anotherCall: (
    tool: string,
    runId: string,
    callId: string,
    recordedTool: string,
    startedAt: number,
    startedBy: string,
  ) =>
    `Not run: the ledger already holds another call under run ${JSON.stringify(boundText(runId, 200))}, call ${JSON.stringify(boundText(callId, 200))} ` +
    `(tool "${boundText(recordedTool, 200)}"${recordedTool === tool ? ' with other arguments' : ''}, started at ${new Date(startedAt).toISOString()} on ${boundText(startedBy, 300)}). ` +
    'A call id is used once per run; call the tool again with a new id.',
  resultNotKept: (tool: string, endedAt: number, startedBy: string, bytes: number, sha256: string) =>
    `Not run again: this call of "${boundText(tool, 200)}" already ran (it ended at ${new Date(endedAt).toISOString()}, started on ${boundText(startedBy, 300)}). ` +
    `Its result (${bytes} bytes of JSON, sha256 ${sha256 || 'unknown'}) was larger than the ledger keeps, so it cannot be shown again.`,
  unreachable: (ledger: string, reason: string) =>
    `Not run: the call could not be recorded in the ledger ${boundText(ledger, 300)} (${boundText(reason, 500)}). ` +
    'A call that is not recorded could run twice, so it was not run.',
  endNotRecorded: (ledger: string, runId: string, callId: string, reason: string) =>
    `toolpool: the end of call ${JSON.stringify(boundText(callId, 200))} (run ${JSON.stringify(boundText(runId, 200))}) could not be recorded in the ledger ${boundText(ledger, 300)} (${boundText(reason, 500)}); ` +
    'a retry of it will be answered "may already have run".',
  sqliteNeedsNode: (version: string) =>
    `sqliteLedger needs node:sqlite, which Node ${version} does not have: use Node 22.13 or later (or 23.4+), or another ledger (memoryLedger(), redisLedger from toolpool/bullmq, or your own).`,
  badRunId: (problem: string) => `executeBatch: runId ${problem}`,
} as const;
