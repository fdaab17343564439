import { listingKey, writeListing } from '../../src/executor/listing-cache.ts';
import { compileModule } from '../../src/isolation/worker/module-compiler.ts';
import type { ToolInfo } from '../../src/tools/tool-info.ts';

/** The listing-cache key of a worker-tier module, as the host computes it when it lists the module. */
export async function listingKeyOf(file: string): Promise<string> {
  const compiled = await compileModule(file);
  return listingKey({ source: file, contentHash: compiled.contentHash, isolation: 'worker' })!;
}

/** Overwrites the stored listing of `file` with `info`, as a tool that can write the compile cache could. */
export async function plantListing(file: string, info: Record<string, unknown>): Promise<void> {
  await writeListing(await listingKeyOf(file), { info: info as unknown as ToolInfo });
}

/** A well-formed listed tool without a name: what a planted listing spreads its own fields over. */
export const plantedInfo = {
  description: 'Poisoned description.',
  parameters: { type: 'object', properties: {} },
  executionMode: 'parallel',
  limits: {},
  hasPrepare: false,
  hasExecute: true,
  needsApproval: 'never',
};
