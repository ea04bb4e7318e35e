import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { QuantityRecord } from '../../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { SqliteRecordLedger } from '../../../src/processes/etl/recordLedger.js';

const upload = { user_id: 'u1', provider: 'apple-health' } as UploadAccepted['data'];
const key = Buffer.alloc(32, 7);

const hr = (i: number, value = 60): QuantityRecord =>
  ({
    kind: 'quantity',
    external_id: `x${i}`,
    type: 'heart_rate',
    start_date: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    end_date: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
    value,
    unit: 'count/min',
    source: 'watch',
    metadata: {},
  }) as unknown as QuantityRecord;

let dirs: string[] = [];
const ledgerFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-'));
  dirs.push(dir);
  return join(dir, 'record-ledger.sqlite');
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('the record ledger (contracts §13 `unchanged`)', () => {
  it('counts as known only what another job noted, across more records than one lookup takes', async () => {
    const ledger = new SqliteRecordLedger(ledgerFile());
    const first = Array.from({ length: 250 }, (_, i) => hr(i));
    expect(await ledger.known(upload, 'job-a', first, key)).toEqual(first.map(() => false));
    // The same export again under another job: every record known (the read-only path).
    expect(await ledger.known(upload, 'job-b', first, key)).toEqual(first.map(() => true));
    // A newer export holding the older one: only the new records are written.
    const newer = [...first.slice(0, 120), ...Array.from({ length: 130 }, (_, i) => hr(1000 + i))];
    expect(await ledger.known(upload, 'job-c', newer, key)).toEqual([...Array(120).fill(true), ...Array(130).fill(false)]);
    // ...and what job-c noted counts against a fourth job.
    expect(await ledger.known(upload, 'job-d', newer.slice(120), key)).toEqual(Array(130).fill(true));
    ledger.close();
  });

  it('never counts a job\'s own records against it, so a run resumed after a crash decides as the first did', async () => {
    const ledger = new SqliteRecordLedger(ledgerFile());
    const records = Array.from({ length: 150 }, (_, i) => hr(i));
    await ledger.known(upload, 'job-a', records.slice(0, 100), key);
    expect(await ledger.known(upload, 'job-a', records, key)).toEqual(records.map(() => false));
    ledger.close();
  });

  it('writes both of two identical records in one batch (each line of one upload counts), and knows them afterwards', async () => {
    const ledger = new SqliteRecordLedger(ledgerFile());
    expect(await ledger.known(upload, 'job-a', [hr(1), hr(1), hr(2)], key)).toEqual([false, false, false]);
    expect(await ledger.known(upload, 'job-b', [hr(1), hr(2), hr(1)], key)).toEqual([true, true, true]);
    ledger.close();
  });

  it('tells records apart by value, user and data key', async () => {
    const ledger = new SqliteRecordLedger(ledgerFile());
    await ledger.known(upload, 'job-a', [hr(1, 60)], key);
    expect(await ledger.known(upload, 'job-b', [hr(1, 61)], key)).toEqual([false]);
    expect(await ledger.known({ ...upload, user_id: 'u2' }, 'job-b', [hr(1, 60)], key)).toEqual([false]);
    // Another generation's key (the data was erased): the old rows match nothing.
    expect(await ledger.known(upload, 'job-b', [hr(1, 60)], Buffer.alloc(32, 8))).toEqual([false]);
    ledger.close();
  });

  it('sees what another connection (another ETL thread) noted', async () => {
    const file = ledgerFile();
    const a = new SqliteRecordLedger(file);
    const b = new SqliteRecordLedger(file);
    const records = Array.from({ length: 120 }, (_, i) => hr(i));
    await a.known(upload, 'job-a', records, key);
    expect(await b.known(upload, 'job-b', records, key)).toEqual(records.map(() => true));
    a.close();
    b.close();
  });

  it('moves a ledger of the earlier layout (the job named in every row) into the compact one when opened', async () => {
    // The earlier layout's rows, built from what the current one stores for the same records.
    const records = Array.from({ length: 50 }, (_, i) => hr(i));
    const source = ledgerFile();
    const l = new SqliteRecordLedger(source);
    await l.known(upload, 'job-a', records, key);
    l.close();
    const current = new Database(source);
    const rows = current.prepare('SELECT f.fp AS fp, j.job AS job FROM record_fingerprints f JOIN ledger_jobs j ON j.id = f.job').all() as { fp: Buffer; job: string }[];
    current.close();
    const file = ledgerFile();
    const old = new Database(file);
    old.exec('CREATE TABLE fingerprints (fp BLOB PRIMARY KEY, job TEXT NOT NULL) WITHOUT ROWID');
    for (const r of rows) old.prepare('INSERT INTO fingerprints (fp, job) VALUES (?, ?)').run(r.fp, r.job);
    old.close();

    const ledger = new SqliteRecordLedger(file);
    expect(await ledger.known(upload, 'job-b', records, key)).toEqual(records.map(() => true));
    expect(await ledger.known(upload, 'job-a', records, key)).toEqual(records.map(() => false));
    ledger.close();
    const after = new Database(file);
    const tables = after.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
    after.close();
    expect(tables.map((t) => t.name)).toEqual(['ledger_jobs', 'record_fingerprints']);
  });
});
