import { ToolpoolError, ToolpoolTypeError } from '../core/error-codes.ts';
import { LedgerErrors } from '../core/errors.ts';
import { readRecord, type Ledger, type LedgerRecord } from '../core/ledger.ts';

/** What this file uses of `node:sqlite` (Node 22.13+). */
interface Statement {
  run(...params: unknown[]): { changes: number | bigint };
  get(...params: unknown[]): Record<string, unknown> | undefined;
}
interface Database {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
type SqliteModule = { DatabaseSync: new (path: string) => Database };

export interface SqliteLedgerOptions {
  /** How long a write waits for another process's lock on the file before the call fails (default 5000 ms). */
  busyTimeoutMs?: number;
}

/**
 * A ledger in a SQLite file (`node:sqlite`, Node 22.13 or later): every
 * executor on this machine that opens the same file shares its records, so
 * a host that restarts after a crash, or a second host process, does not
 * run a call again. Each record is written and synced (`synchronous=FULL`)
 * before the call runs. Throws at once on a Node without `node:sqlite`.
 */
export function sqliteLedger(path: string, options: SqliteLedgerOptions = {}): Ledger {
  if (typeof path !== 'string' || path === '')
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      'sqliteLedger(path): path must be a file path (a non-empty string)',
    );
  const sqlite = loadSqlite();
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  if (!(Number.isInteger(busyTimeoutMs) && busyTimeoutMs >= 0))
    throw new ToolpoolTypeError(
      'TOOLPOOL_ERR_INVALID_OPTION',
      `sqliteLedger: busyTimeoutMs must be an integer >= 0, got ${String(options.busyTimeoutMs)}`,
    );
  const db = new sqlite.DatabaseSync(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    db.exec(
      'CREATE TABLE IF NOT EXISTS toolpool_calls (run_id TEXT NOT NULL, call_id TEXT NOT NULL, record TEXT NOT NULL, end_record TEXT, PRIMARY KEY (run_id, call_id))',
    );
  } catch (error) {
    db.close();
    throw error;
  }
  const insert = db.prepare(
    'INSERT INTO toolpool_calls (run_id, call_id, record) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  );
  const select = db.prepare('SELECT record, end_record FROM toolpool_calls WHERE run_id = ? AND call_id = ?');
  const finish = db.prepare('UPDATE toolpool_calls SET end_record = ? WHERE run_id = ? AND call_id = ?');
  const remove = db.prepare('DELETE FROM toolpool_calls WHERE run_id = ? AND call_id = ? AND end_record IS NULL');
  let closed = false;
  const open = () => {
    if (closed) throw new ToolpoolError('TOOLPOOL_ERR_LEDGER', 'the ledger was closed');
  };
  return {
    name: `sqliteLedger(${path})`,
    async claim(key, record) {
      open();
      if (Number(insert.run(key.runId, key.callId, JSON.stringify(record)).changes) === 1) return undefined;
      const row = select.get(key.runId, key.callId);
      const found = row ? rowRecord(row) : undefined;
      if (!found)
        throw new ToolpoolError(
          'TOOLPOOL_ERR_LEDGER',
          `its row for run ${JSON.stringify(key.runId)}, call ${JSON.stringify(key.callId)} is unreadable`,
        );
      return found;
    },
    async end(key, end) {
      open();
      finish.run(JSON.stringify(end), key.runId, key.callId);
    },
    async release(key) {
      open();
      remove.run(key.runId, key.callId);
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function rowRecord(row: Record<string, unknown>): LedgerRecord | undefined {
  try {
    const record = JSON.parse(String(row.record)) as Record<string, unknown>;
    if (typeof row.end_record === 'string') record.end = JSON.parse(row.end_record);
    return readRecord(record);
  } catch {
    return undefined;
  }
}

function loadSqlite(): SqliteModule {
  // getBuiltinModule (Node 20.16+, 22.3+) loads a builtin synchronously from ESM and CommonJS alike.
  const getBuiltin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  let sqlite: SqliteModule | undefined;
  try {
    sqlite = getBuiltin?.call(process, 'node:sqlite') as SqliteModule | undefined;
  } catch {
    sqlite = undefined;
  }
  if (typeof sqlite?.DatabaseSync !== 'function')
    throw new ToolpoolError('TOOLPOOL_ERR_UNSUPPORTED', LedgerErrors.sqliteNeedsNode(process.versions.node));
  return sqlite;
}
