import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../commands/ingestion/records.js';
import { ingestStream } from '../../../commands/ingestion/ingestedEvents.js';
import { eventSealer } from '../../../src/crypto/recordSealing.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlJob, type EtlKeys } from '../../../src/processes/etl/runEtlJob.js';
import { blockKey, CLUSTER_BYTES, ledgerOf, recordIdentity } from '../../../src/processes/etl/recordLedger.js';
import { FINGERPRINT_FORM_ID, MongoRecordLedger, RECORD_LEDGER, upgradeRows, type LedgerDoc } from '../../../src/recordledger/mongoRecordLedger.js';
import { EARLIER_FINGERPRINT_BYTES, JOB_TAG_BYTES, type RecordLedger } from '../../../src/recordledger/recordLedger.js';
import { SqliteRecordLedger } from '../../../src/recordledger/sqliteRecordLedger.js';
import { tempDir } from '../../support/tmp.js';
import { memoryMongo } from '../../workqueue/memoryMongo.js';
import { appleHealthImport } from '../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { exportXml, zipOf } from '../../sources/files/apple-health/exportFixtures.js';
import { appleUpload, crashingAfter, ledgerBackends, rawStoreOf } from './etlRunFakes.js';

/**
 * contracts §13 `unchanged` through the ETL run, on each ledger backend (issue 21: the production
 * MongoDB ledger as well as the embedded one): a second upload of the same export writes nothing
 * and counts every record unchanged, also when it crashed part-way and resumed; a run resumed
 * after a crash decides as the first did; another data key (a later generation, after an
 * erasure) matches nothing.
 */
const upload = appleUpload;
const job = (user: string, n: number) => `upload-${user}-${String(n).padStart(64, '0')}`;

async function exportZip(n: number): Promise<Buffer> {
  const rows = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="${50 + (i % 50)}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(rows.join('\n')) });
}
const keysOf = (key: Buffer): EtlKeys => ({ sealer: eventSealer('u/apple-health/0', key), dataKey: { key, keyId: 'u/apple-health/0' } });

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

describe.each(ledgerBackends)('unchanged through the ETL run, ledger on %s (contracts §13; issue 21)', (_name, openLedger) => {
  const setup = () => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const ledger = openLedger();
    closing.push(async () => {
      await ledger.close();
      await store.close();
    });
    return { store, ledger };
  };
  const run = (store: EventStore, ledger: RecordLedger, payload: Buffer, user: string, n: number, key: Buffer) =>
    runEtlJob(store, rawStoreOf(payload), appleHealthImport, job(user, n), upload(user), undefined, keysOf(key), { ledger, checkpointItems: 500 });

  it('a second upload of the same export writes nothing: every record counts as unchanged', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ kind: 'succeeded', records: { quantity: 1200 }, unchanged: 0 });
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ kind: 'succeeded', records: {}, unchanged: 1200 });
    const written = (await store.readStream(ingestStream('u1', job('u1', 2)))).filter((e) => e.type === 'samples.ingested');
    expect(written).toEqual([]);
  });

  it('a newer export holding an older one writes only what is new', async () => {
    const { store, ledger } = setup();
    const key = randomBytes(32);
    await run(store, ledger, await exportZip(700), 'u1', 1, key);
    expect(await run(store, ledger, await exportZip(1000), 'u1', 2, key)).toMatchObject({ records: { quantity: 300 }, unchanged: 700 });
  });

  it.each([1, 3])('a run killed after %i appends and resumed decides as the first did: its own records are written once, not counted unchanged', async (appends) => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const stream = ingestStream('u1', job('u1', 1));
    await expect(runEtlJob(crashingAfter(store, stream, appends), rawStoreOf(payload), appleHealthImport, job('u1', 1), upload('u1'), undefined, keysOf(key), { ledger, checkpointItems: 500 })).rejects.toThrow('killed');
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ records: { quantity: 1200 }, unchanged: 0 });
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ records: {}, unchanged: 1200 });
  });

  it('issue 37: jobs run at once (their notes and commits sharing transactions), one killed part-way: each writes its records once, the killed one resumed decides as the first did, and later uploads count every record unchanged', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const users = ['u1', 'u2', 'u3', 'u4'];
    const killed = ingestStream('u1', job('u1', 1));
    const first = await Promise.allSettled(
      users.map((user) =>
        user === 'u1'
          ? runEtlJob(crashingAfter(store, killed, 2), rawStoreOf(payload), appleHealthImport, job(user, 1), upload(user), undefined, keysOf(key), { ledger, checkpointItems: 500 })
          : run(store, ledger, payload, user, 1, key),
      ),
    );
    expect(first[0]).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('killed') } });
    for (const other of first.slice(1)) expect(other).toMatchObject({ status: 'fulfilled', value: { records: { quantity: 1200 }, unchanged: 0 } });
    expect(await run(store, ledger, payload, 'u1', 1, key)).toMatchObject({ records: { quantity: 1200 }, unchanged: 0 });
    for (const user of users) {
      const inLog = (await store.readStream(ingestStream(user, job(user, 1)))).filter((e) => e.type === 'samples.ingested');
      expect(inLog.reduce((n, e) => n + (e.data as { sealed: { count: number } }).sealed.count, 0)).toBe(1200);
    }
    const again = await Promise.all(users.map((user) => run(store, ledger, payload, user, 2, key)));
    for (const outcome of again) expect(outcome).toMatchObject({ records: {}, unchanged: 1200 });
  });

  // Checkpoints far apart: records are checked against the ledger (500 at a time) well before their batch is appended.
  it.each([0, 1])('contracts §19 (issue 35): a job that stopped for good after %i appends (it parks) makes a later upload of the same records skip only what it appended; the rest is written', async (appends) => {
    const { store, ledger } = setup();
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const parked = ingestStream('u1', job('u1', 1));
    await expect(runEtlJob(crashingAfter(store, parked, appends), rawStoreOf(payload), appleHealthImport, job('u1', 1), upload('u1'), undefined, keysOf(key), { ledger })).rejects.toThrow('killed');
    const inLog = (await store.readStream(parked)).filter((e) => e.type === 'samples.ingested').reduce((n, e) => n + (e.data as { sealed: { count: number } }).sealed.count, 0);
    expect(inLog).toBeLessThan(1200);
    // Never resumed: a later upload of the same export writes every record the parked job did not append.
    expect(await run(store, ledger, payload, 'u1', 2, key)).toMatchObject({ kind: 'succeeded', records: { quantity: 1200 - inLog }, unchanged: inLog });
    expect(await run(store, ledger, payload, 'u1', 3, key)).toMatchObject({ records: {}, unchanged: 1200 });
  });

  it('under another data key (the next generation after an erasure) or for another user, nothing matches', async () => {
    const { store, ledger } = setup();
    const payload = await exportZip(300);
    await run(store, ledger, payload, 'u1', 1, randomBytes(32));
    expect(await run(store, ledger, payload, 'u1', 2, randomBytes(32))).toMatchObject({ records: { quantity: 300 }, unchanged: 0 });
    const shared = randomBytes(32);
    await run(store, ledger, payload, 'u2', 1, shared);
    expect(await run(store, ledger, payload, 'u3', 1, shared)).toMatchObject({ records: { quantity: 300 }, unchanged: 0 });
  });
});

type OlderRow = { fp: Buffer; job: Buffer };

/**
 * What an earlier version left in the ledger after storing `payload` for user u1 under `key`:
 * each record's 20-byte fingerprint, committed by one job. Before fingerprints were clustered
 * (issue 38) the first 20 bytes of its HMAC; once `clustered`, 4 bytes of its block key's HMAC,
 * then the first 16 of its own.
 */
async function olderRowsOf(payload: Buffer, key: Buffer, clustered: boolean): Promise<OlderRow[]> {
  const ledgerKey = createHmac('sha256', key).update('record-ledger').digest();
  const job = randomBytes(JOB_TAG_BYTES);
  const raw = rawStoreOf(payload);
  const rows: OlderRow[] = [];
  const source = { size: payload.length, read: (s: number, e: number) => raw.readRange('export', s, e) };
  for await (const item of appleHealthImport.decode(source as never, { provider: 'apple-health', receivedAt: upload('u1').accepted_at, dataType: null })) {
    if (!('record' in item)) continue;
    const scope = 'u1\u0000apple-health\u0000';
    const digest = createHmac('sha256', ledgerKey).update(`${scope}${recordIdentity(item.record)}`).digest();
    const cluster = createHmac('sha256', ledgerKey).update(`${scope}cluster\u0000${blockKey(item.record)}`).digest();
    const fp = clustered ? Buffer.concat([cluster.subarray(0, 4), digest.subarray(0, 16)]) : digest.subarray(0, EARLIER_FINGERPRINT_BYTES);
    rows.push({ fp, job });
  }
  return rows;
}

/** A ledger holding `rows` as an earlier version wrote them (committed), on each backend (`clustered`: the version just before short fingerprints). */
const upgradedLedgers: [string, (rows: OlderRow[], clustered: boolean) => Promise<RecordLedger>][] = [
  [
    'embedded SQLite',
    async (rows, clustered) => {
      const path = join(tempDir(), `ledger-${randomUUID()}.sqlite`);
      const db = new Database(path);
      db.exec('CREATE TABLE claims (fp BLOB NOT NULL, job BLOB NOT NULL, committed INTEGER NOT NULL, PRIMARY KEY (fp, job)) WITHOUT ROWID');
      const insert = db.prepare('INSERT INTO claims VALUES (?, ?, 1)');
      for (const r of rows) insert.run(r.fp, r.job);
      if (clustered) db.exec('CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID');
      db.pragma(`user_version = ${clustered ? 3 : 2}`);
      db.close();
      return new SqliteRecordLedger(path);
    },
  ],
  [
    'MongoDB adapter on the in-memory stand-in',
    async (rows, clustered) => {
      const { db } = memoryMongo();
      const docs = db.collection<LedgerDoc>(RECORD_LEDGER);
      if (clustered) await docs.insertMany([{ _id: FINGERPRINT_FORM_ID, unclustered: false } as unknown as LedgerDoc]);
      await docs.insertMany(rows.map((r) => ({ _id: `${r.fp.toString('base64')}.${r.job.toString('base64')}`, fp: r.fp.toString('base64'), job: r.job.toString('base64'), committed: true })));
      return new MongoRecordLedger(db, undefined, await upgradeRows(docs));
    },
  ],
];

describe.each(upgradedLedgers)('issue 38: a ledger an earlier version filled, on %s', (_name, openLedger) => {
  it.each([
    ['before fingerprints were clustered', false],
    ['just before fingerprints were short (20 bytes, clustered): converted', true],
  ])('%s: an upload of the same export after the upgrade counts every record unchanged, and so does the next one', async (_when, clustered) => {
    const store = new SqliteEventStore({ path: ':memory:' });
    const payload = await exportZip(1200);
    const key = randomBytes(32);
    const ledger = await openLedger(await olderRowsOf(payload, key, clustered), clustered);
    closing.push(async () => {
      await ledger.close();
      await store.close();
    });
    expect(ledger.unclusteredRows).toBe(!clustered);
    const run = (n: number) => runEtlJob(store, rawStoreOf(payload), appleHealthImport, job('u1', n), upload('u1'), undefined, keysOf(key), { ledger, checkpointItems: 500 });
    expect(await run(1)).toMatchObject({ records: {}, unchanged: 1200 });
    expect(await run(2)).toMatchObject({ records: {}, unchanged: 1200 });
  });
});

describe('issue 38: fingerprints cluster by block key', () => {
  it('the fingerprints of records of one kind, type, source and day begin with the same bytes, so the ledger holds them together; other keys begin otherwise', async () => {
    const noted: Buffer[] = [];
    const spy: RecordLedger = { backend: 'sqlite', unclusteredRows: false, note: async (_job, fps) => (noted.push(...fps), fps.map(() => false)), commit: async () => {}, close: async () => {} };
    const key = randomBytes(32);
    const jobLedger = ledgerOf(spy, key, upload('u1'), job('u1', 1));
    const sample = (type: string, source: string, at: string, value: number): NormalizedRecord =>
      ({ kind: 'quantity', external_id: `${type}-${at}`, type, value, unit: 'count/min', start_date: at, end_date: at, source, metadata: {} }) as unknown as NormalizedRecord;
    const records = [
      sample('heart_rate', 'apple', '2026-01-01T08:00:00.000Z', 60),
      sample('heart_rate', 'apple', '2026-01-01T23:59:00.000Z', 61),
      sample('heart_rate', 'apple', '2026-01-02T08:00:00.000Z', 60),
      sample('heart_rate', 'polar', '2026-01-01T08:00:00.000Z', 60),
      sample('step_count', 'apple', '2026-01-01T08:00:00.000Z', 60),
    ];
    await jobLedger.known(records);
    const prefix = (fp: Buffer) => fp.subarray(0, CLUSTER_BYTES).toString('hex');
    expect(noted).toHaveLength(5);
    expect(prefix(noted[0]!)).toBe(prefix(noted[1]!));
    expect(noted[0]!.equals(noted[1]!)).toBe(false);
    expect(new Set([noted[0]!, noted[2]!, noted[3]!, noted[4]!].map(prefix)).size).toBe(4);
  });
});
