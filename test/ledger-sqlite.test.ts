import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterAll, describe, expect, test } from 'vitest';
import { createExecutor, defineTool, sqliteLedger } from '../src/index.ts';
import { call, textOf } from './support/executors.ts';
import { ledgerCases } from './support/ledger-cases.ts';

// sqliteLedger across processes, on a real SQLite file: node:sqlite exists
// without a flag from Node 22.13 (and 23.4) on. On older lines the ledger
// refuses at creation, which the last test checks.
const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
const hasSqlite = (major === 22 && minor >= 13) || (major === 23 && minor >= 4) || major >= 24;

const folder = mkdtempSync(join(tmpdir(), 'toolpool-sqlite-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;

describe.skipIf(!hasSqlite)('sqliteLedger (node:sqlite exists on this line)', () => {
  ledgerCases(
    () => `sqlite:${join(folder, `calls-${++files}.db`)}`,
    (spec) => sqliteLedger(spec.slice('sqlite:'.length)),
  );

  test('a ledger file another process holds locked: nothing runs, and the error names the ledger and why', async () => {
    const path = join(folder, 'locked.db');
    const holder = sqliteLedger(path);
    // node:sqlite's types are not in this @types/node: only what is used here.
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite') as {
      DatabaseSync: new (path: string) => { exec(sql: string): void; close(): void };
    };
    const lock = new DatabaseSync(path);
    lock.exec('BEGIN EXCLUSIVE');
    const runs: string[] = [];
    const tool = defineTool({
      name: 'pay',
      description: 'Pay',
      parameters: Type.Object({}),
      execute: () => {
        runs.push('ran');
        return { content: [{ type: 'text', text: 'paid' }] };
      },
    });
    const ledger = sqliteLedger(path, { busyTimeoutMs: 50 });
    const executor = await createExecutor({ tools: [tool], ledger });
    try {
      const batch = await executor.executeBatch([call('c1', 'pay')], { runId: 'r' });
      expect(runs).toEqual([]);
      expect(textOf(batch.results[0]!)).toMatch(
        new RegExp(
          `^Not run: the call could not be recorded in the ledger sqliteLedger\\(${path.replaceAll('/', '\\/')}\\) \\(database is locked\\)`,
        ),
      );
    } finally {
      lock.exec('ROLLBACK');
      lock.close();
      await executor.close();
      await ledger.close?.();
      await holder.close?.();
    }
  });
});

describe.skipIf(hasSqlite)('sqliteLedger on a line without node:sqlite', () => {
  test('refuses at creation, naming the Node version it needs', () => {
    expect(() => sqliteLedger(join(folder, 'never.db'))).toThrow(
      new RegExp(
        `sqliteLedger needs node:sqlite, which Node ${process.versions.node} does not have: use Node 22\\.13 or later`,
      ),
    );
  });
});
