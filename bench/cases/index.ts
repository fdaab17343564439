import { callOverhead } from './01-call-overhead.ts';
import { throughput } from './02-throughput.ts';
import { cpuBatch } from './03-cpu-batch.ts';
import { responsiveness } from './04-responsiveness.ts';
import { progress } from './05-progress.ts';
import { crashRecovery } from './06-crash-recovery.ts';
import { coldStart } from './07-cold-start.ts';
import { memory } from './08-memory.ts';
import { validation } from './09-validation.ts';
import { piAgentCore } from './10-pi-agent-core.ts';
import { hardStop } from './11-hard-stop.ts';
import { sandboxTier } from './12-sandbox.ts';
import { hardening } from './13-hardening.ts';
import { sharedWorkers } from './14-shared-workers.ts';
import { trustDomains } from './15-trust-domains.ts';
import { remoteCalls } from './16-remote.ts';
import { mcpClient } from './17-mcp-client.ts';
import { coldStartFresh } from './18-cold-start-fresh.ts';
import { ledgerCost } from './19-ledger.ts';
import type { BenchCase } from '../lib/types.ts';

/** Every case of issue 4, in order, issue 3's hard-stop target, issue 11's sandbox tier, the zero-trust hardening's cost, issue 10's shared workers, issue 20's trust domains, issue 17's tools across machines issue 16's MCP client, issue 19's fresh-process cold start and issue 25's ledger cost. */
export const CASES: BenchCase[] = [
  callOverhead,
  throughput,
  cpuBatch,
  responsiveness,
  progress,
  crashRecovery,
  coldStart,
  memory,
  validation,
  piAgentCore,
  hardStop,
  sandboxTier,
  hardening,
  sharedWorkers,
  trustDomains,
  remoteCalls,
  mcpClient,
  coldStartFresh,
  ledgerCost,
];
