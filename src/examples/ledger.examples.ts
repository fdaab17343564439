/**
 * Examples docs/ledger.md quotes (between the region markers), type-checked
 * with the rest of the code and run by test/ledger.test.ts, so the page
 * cannot drift from the API. Not part of the build.
 */
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { defineTool, type Ledger, type LedgerKey, type LedgerRecord } from '../index.ts';

// #region custom-ledger
/**
 * A ledger in a folder: one file per call, created with the `wx` flag
 * (create only if absent, atomic on a local or NFSv3+ disk). The same
 * four methods over Postgres are an `INSERT ... ON CONFLICT DO NOTHING`,
 * a `SELECT`, an `UPDATE` and a `DELETE`.
 */
export function folderLedger(folder: string): Ledger {
  const file = ({ runId, callId }: LedgerKey) => join(folder, createHash('sha256').update(JSON.stringify([runId, callId])).digest('hex'));
  return {
    name: `folderLedger(${folder})`,
    async claim(key, record) {
      await mkdir(folder, { recursive: true });
      try {
        const handle = await open(file(key), 'wx'); // throws EEXIST when the call is recorded already
        await handle.writeFile(JSON.stringify(record));
        await handle.sync(); // durable before the call runs
        await handle.close();
        return undefined; // claimed: the call may run
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // the call gets "not run: the ledger ... failed"
        return JSON.parse(await readFile(file(key), 'utf8')) as LedgerRecord; // started, or ended with its result
      }
    },
    async end(key, end) {
      const record = JSON.parse(await readFile(file(key), 'utf8')) as LedgerRecord;
      await writeFile(`${file(key)}.end`, JSON.stringify({ ...record, end }), { flush: true });
      await rename(`${file(key)}.end`, file(key)); // readers see the old record or the new, never half of one
    },
    async release(key) {
      await rm(file(key), { force: true }); // a claim whose call never ran
    },
  };
}
// #endregion custom-ledger

// #region idempotency-key
/** Exactly once needs the other side's help: pass the run id and call id as its idempotency key. */
export const charge = defineTool({
  name: 'charge',
  description: 'Charge a card',
  parameters: Type.Object({ card: Type.String(), cents: Type.Integer({ minimum: 1 }) }),
  async execute({ card, cents }, ctx) {
    const response = await fetch('https://payments.example/charges', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `${ctx.runId}:${ctx.callId}` },
      body: JSON.stringify({ card, cents }),
      signal: ctx.signal,
    });
    // A tool reports failure by throwing (an example of a user's tool: plain Error, as users write it).
    if (!response.ok) throw new Error(`the payment service said ${response.status}`);
    return { content: [{ type: 'text', text: `Charged ${cents} cents.` }] };
  },
});
// #endregion idempotency-key
