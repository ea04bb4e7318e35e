import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { eventSealer } from '../../../src/crypto/recordSealing.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { runEtlJob, type EtlKeys } from '../../../src/processes/etl/runEtlJob.js';
import type { RecordLedger } from '../../../src/recordledger/recordLedger.js';
import { appleHealthImport } from '../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { exportXml, zipOf } from '../../sources/files/apple-health/exportFixtures.js';
import { appleUpload, ledgerBackends, rawStoreOf } from './etlRunFakes.js';

/**
 * Issue 38 (the 200 MB export's first import): the commits of a job's appended records share the
 * ledger's next write instead of each taking one (an fsync each on SQLite), and never come before
 * the append of the records they commit.
 */
const job = (n: number) => `upload-u1-${String(n).padStart(64, '0')}`;
const keysOf = (key: Buffer): EtlKeys => ({ sealer: eventSealer('u/apple-health/0', key), dataKey: { key, keyId: 'u/apple-health/0' } });

async function exportZip(n: number): Promise<Buffer> {
  const rows = Array.from({ length: n }, (_, i) => {
    const at = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000');
    return `<Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="${at}" startDate="${at}" endDate="${at}" value="${50 + (i % 50)}"/>`;
  });
  return zipOf({ 'apple_health_export/export.xml': exportXml(rows.join('\n')) });
}

type Call = { what: 'note' | 'commit' | 'append'; turn: number; n: number };

/** The ledger's calls and the store's appends in order, each with the synchronous run ("turn") it was asked for in. */
function watched(ledger: RecordLedger, store: EventStore): { ledger: RecordLedger; store: EventStore; calls: Call[] } {
  const calls: Call[] = [];
  let turn = 0;
  let marked = false;
  const mark = () => {
    if (!marked) {
      marked = true;
      queueMicrotask(() => {
        marked = false;
        turn++;
      });
    }
    return turn;
  };
  const spy: RecordLedger = {
    backend: ledger.backend,
    unclusteredRows: ledger.unclusteredRows,
    note: (tag, fps, older) => (calls.push({ what: 'note', turn: mark(), n: fps.length }), ledger.note(tag, fps, older)),
    commit: (tag, fps) => (calls.push({ what: 'commit', turn: mark(), n: fps.length }), ledger.commit(tag, fps)),
    close: () => ledger.close(),
  };
  const appending = Object.create(store) as EventStore;
  appending.appendToStream = async (stream, events, options) => {
    const result = await store.appendToStream(stream, events, options);
    calls.push({ what: 'append', turn: mark(), n: events.length });
    return result;
  };
  return { ledger: spy, store: appending, calls };
}

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

describe.each(ledgerBackends)('issue 38: a first import writes its ledger commits with its notes, and a decision\'s two notes together, ledger on %s', (_name, openLedger) => {
  it('every commit but the end flush is asked for in the same turn as a note (one write for both), and only after an append; once a block differed, the blocks\' and the records\' notes of a decision in one turn', async () => {
    const inner = openLedger();
    const base = new SqliteEventStore({ path: ':memory:' });
    closing.push(async () => {
      await inner.close();
      await base.close();
    });
    const { ledger, store, calls } = watched(inner, base);
    const key = randomBytes(32);
    // No checkpoint before the end: only the end's flush commits on its own.
    const outcome = await runEtlJob(store, rawStoreOf(await exportZip(4000)), appleHealthImport, job(1), appleUpload('u1'), undefined, keysOf(key), { ledger, checkpointItems: 100_000 });
    expect(outcome).toMatchObject({ kind: 'succeeded', records: { quantity: 4000 }, unchanged: 0 });

    const turnsWithNote = new Set(calls.filter((c) => c.what === 'note').map((c) => c.turn));
    const commitTurns = [...new Set(calls.filter((c) => c.what === 'commit').map((c) => c.turn))];
    // Batches of 1,000 records were appended before the end: their commits went with later notes.
    expect(calls.filter((c) => c.what === 'append').length).toBeGreaterThanOrEqual(4);
    expect(commitTurns.length).toBeGreaterThan(1);
    expect(commitTurns.filter((t) => !turnsWithNote.has(t))).toEqual([commitTurns[commitTurns.length - 1]]);
    // A commit never precedes the first append (nothing of this job is in the log before it).
    const firstAppend = calls.findIndex((c) => c.what === 'append');
    expect(calls.findIndex((c) => c.what === 'commit')).toBeGreaterThan(firstAppend);

    // Once the first block differed, each decision's two notes (its blocks', its records') were asked for together.
    const notesPerTurn = new Map<number, number>();
    for (const c of calls) if (c.what === 'note') notesPerTurn.set(c.turn, (notesPerTurn.get(c.turn) ?? 0) + 1);
    expect(notesPerTurn.size).toBeGreaterThanOrEqual(8);
    // The first block alone (its note, then its records'): decided as soon as complete, before any block differed.
    expect([...notesPerTurn.values()].filter((n) => n === 1)).toHaveLength(2);

    // Every claim ended committed: the same export again counts every record unchanged.
    expect(await runEtlJob(store, rawStoreOf(await exportZip(4000)), appleHealthImport, job(2), appleUpload('u1'), undefined, keysOf(key), { ledger, checkpointItems: 100_000 })).toMatchObject({ records: {}, unchanged: 4000 });
  });
});
