import type { ResolvedLimits } from '../core/limits.ts';
import type { ToolRunner } from '../core/runner.ts';
import type { Isolation } from '../core/tool.ts';
import type { DetailsValidator } from './output-validation.ts';
import type { ToolInfo } from './tool-info.ts';
import type { ArgumentValidator } from './validation.ts';

/** A tool as the executor holds it once registered: its checked definition, validators, limits and the runner that reaches its code. */
export interface RegisteredTool {
  readonly info: ToolInfo;
  /** How the user gave it, for messages: `module tools/calc.ts` or `inline tool "calc"`. */
  readonly source: string;
  readonly validate: ArgumentValidator;
  /** Checks a result's `details` against the tool's `outputSchema`; only for tools that have one. */
  readonly checkDetails?: DetailsValidator;
  readonly runner: ToolRunner;
  /** The tool's limits over the executor's over the defaults, resolved once. */
  readonly limits: ResolvedLimits;
  /** A module tool's tier (the executor's, or a stronger one the tool asked for); inline tools have none. */
  readonly isolation?: Isolation;
  /** A module tool's content hash (see src/isolation/worker/module-hash.ts). */
  readonly moduleHash?: string;
}
