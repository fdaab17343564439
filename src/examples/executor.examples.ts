/**
 * Examples the README quotes (between the region markers), type-checked
 * with the rest of the code and run by test/readme-examples.test.ts, so the
 * docs cannot drift from the API. Not part of the build.
 */
import { Type } from '@sinclair/typebox';
import { createExecutor, defineTool, type BatchResult, type Executor } from '../index.ts';

/** One slow tool gets 5 minutes; every other tool keeps 10 seconds. */
export async function toolLimitsExample(): Promise<Executor> {
  const crawl = defineTool({
    name: 'crawl_site',
    description: 'Crawl a web site',
    parameters: Type.Object({ url: Type.String() }),
    execute: ({ url }) => ({ content: [{ type: 'text', text: `crawled ${url}` }] }),
  });
  // #region tool-limits
  const executor = await createExecutor({
    tools: [crawl],
    limits: { timeoutMs: 10_000 }, // every tool
    toolLimits: { crawl_site: { timeoutMs: 5 * 60_000 } }, // the host's word for this one: may loosen
  });
  // #endregion
  return executor;
}

/** A folder of tool modules, closed at the end of the scope. */
export async function folderExample(): Promise<BatchResult> {
  // #region folder
  let batch: BatchResult;
  {
    // Every tool module in ./tools and its subfolders (names starting with _ and lib/ are left out);
    // the options go to each module whose default export is a factory.
    await using executor = await createExecutor({ tools: [{ module: './tools', options: { root: '.' } }] });
    batch = await executor.executeBatch([{ id: '1', name: 'calculator', arguments: { expression: '6 * 7' } }]);
  } // executor.close() runs here, also when the block throws
  // #endregion
  return batch;
}

/** Two modules the host trusts as one share workers; a third has a trust domain of its own. */
export async function trustDomainExample(readFile: string, writeFile: string, thirdParty: string): Promise<Executor> {
  // #region trust-domain
  const executor = await createExecutor({
    tools: [
      { module: readFile, trustDomain: 'my-pack' }, // these two share workers
      { module: writeFile, trustDomain: 'my-pack' },
      thirdParty, // a domain of its own, as every module is by default
    ],
  });
  // #endregion
  return executor;
}
