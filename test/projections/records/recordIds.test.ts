import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { USER_ERASED } from '../../../src/catalog/eventTypes.js';
import { childRecordId, recordId } from '../../../projections/records/recordIds.js';
import { sleepProjection } from '../../../projections/records/sleepProjection.js';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { EVENT_SEQUENCES } from '../../../src/projector/eventSequences.js';
import { ProjectorRuntime } from '../../../src/projector/projectorRuntime.js';
import type { Doc } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { shiftPositions } from '../../support/shiftedPositions.js';
import { tempDir } from '../../support/tmp.js';
import { phase, sleepSession } from './fixtures.js';

/**
 * Issue 20, finding 6: record and sleep-phase ids were log position × 10⁴ and × 10⁶; on
 * KurrentDB a position is a byte offset, so phase ids passed 2^53 once the log held about 9 GB.
 * Ids now come from a dense per-projection sequence of the events that carry records
 * (src/projector/eventSequences.ts), which a rebuild reproduces exactly, even after an erasure
 * removed earlier events from the log.
 */
const FAR = 10 ** 13; // a KurrentDB log of ten terabytes
const users = ['00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2', '00000000-0000-4000-8000-0000000000a3'];

let inner: SqliteEventStore;
let events: EventStore;
let readStore: SqliteReadStore;
beforeEach(() => {
  inner = new SqliteEventStore({ path: ':memory:' });
  events = shiftPositions(inner, FAR);
  readStore = new SqliteReadStore({ path: join(tempDir('wellstream-ids-'), 'read.sqlite') });
});
afterEach(async () => {
  await readStore.close();
  await inner.close();
});

const night = (user: string, day: number) =>
  inner.appendToStream(`ingest-${user}-${day}`, [
    {
      type: 'sleep_sessions.ingested',
      data: {
        job: `job-${day}`,
        user_id: user,
        tenant_id: 't',
        provider: 'device-a',
        ingested_at: '2026-11-20T00:00:00.000Z',
        batch: 0,
        records: [
          sleepSession({
            external_id: `night-${day}`,
            bedtime_start: `2026-11-0${day}T22:00:00.000Z`,
            bedtime_end: `2026-11-0${day + 1}T06:00:00.000Z`,
            phases: [phase('light', `2026-11-0${day}T22:00:00Z`, `2026-11-0${day}T23:00:00Z`), phase('deep', `2026-11-0${day}T23:00:00Z`, `2026-11-0${day + 1}T06:00:00Z`)],
          }),
        ],
      },
    },
  ]);

const idsOf = async () => ({
  sessions: (await readStore.find<Doc & { id: number }>('sleep_sessions', { sort: [['_id', 1]] })).map((d) => [d.external_id, d.id]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  phases: (await readStore.find<Doc & { id: number }>('sleep_phases', { sort: [['_id', 1]] })).map((d) => [d._id, d.id]),
});

async function runLive(): Promise<void> {
  const runtime = new ProjectorRuntime(events, readStore, [sleepProjection]);
  await runtime.start();
  await runtime.waitForIdle(await events.headPosition(), 30_000);
  await runtime.stop();
}

describe('record ids from a dense sequence (issue 20, finding 6)', () => {
  it('positions near 10^13 give session and phase ids far below 2^53, and a rebuild gives the same ids', async () => {
    for (const [i, user] of users.entries()) await night(user, i + 1);
    expect(await events.headPosition()).toBeGreaterThan(FAR);
    await runLive();
    const live = await idsOf();
    expect(live.sessions.map(([, id]) => id)).toEqual([recordId(1, 0), recordId(2, 0), recordId(3, 0)]);
    for (const [, id] of [...live.sessions, ...live.phases]) {
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id as number).toBeLessThan(2 ** 53);
    }
    // What the position would have given a phase: past 2^53.
    expect(FAR * 1_000_000).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    await new ProjectorRuntime(events, readStore, [sleepProjection]).rebuild(undefined);
    expect(await idsOf()).toEqual(live);
  });

  it('a rebuild after an erasure removed earlier events keeps every other record’s id (numbers are remembered, not recounted)', async () => {
    for (const [i, user] of users.entries()) await night(user, i + 1);
    await runLive();
    // The first user is erased: their events leave the log, the projection drops their rows.
    await inner.deleteStream(`ingest-${users[0]}-1`, { hard: true });
    await inner.appendToStream(`deletion-x`, [{ type: USER_ERASED, data: { user_id: users[0], tenant_id: 't', job_id: 'x', erased_at: '2026-11-21T00:00:00.000Z' } }]);
    await runLive();
    const live = await idsOf();
    expect(live.sessions).toEqual([
      ['night-2', recordId(2, 0)],
      ['night-3', recordId(3, 0)],
    ]);
    await new ProjectorRuntime(events, readStore, [sleepProjection]).rebuild(undefined);
    expect(await idsOf()).toEqual(live);
  });

  it('an id that would not be a safe integer is refused, never answered wrong', () => {
    expect(() => childRecordId(Math.floor(Number.MAX_SAFE_INTEGER / 1_000_000) + 1, 0)).toThrow(RangeError);
    expect(() => recordId(0, 0)).toThrow(RangeError);
    expect(() => recordId(1, 10_000)).toThrow(RangeError);
  });

  it('on upgrade, a read model whose ids came from log positions is rebuilt once with ids from the sequence', async () => {
    await night(users[0]!, 1);
    const head = await events.headPosition();
    // As an earlier version left it: rows with position-derived ids, a checkpoint, no sequence.
    await readStore.ensureCollections(sleepProjection.collections);
    await readStore.applyBatch({
      projection: 'sleep',
      expectedPosition: 0,
      position: head,
      mode: 'live',
      lastEventAt: null,
      changes: [{ op: 'put', collection: 'sleep_sessions', doc: { _id: 'old', user_id: users[0], external_id: 'night-1', id: head * 10_000 }, position: head, index: 0 }],
    });
    const runtime = new ProjectorRuntime(events, readStore, [sleepProjection]);
    await runtime.init();
    expect(await readStore.getCheckpoint('sleep')).toMatchObject({ position: 0, status: 'live' });
    expect(await readStore.count('sleep_sessions')).toBe(0);
    expect(await readStore.count(EVENT_SEQUENCES, { projection: 'sleep' })).toBe(1);
    await runLive();
    expect((await idsOf()).sessions).toEqual([['night-1', recordId(1, 0)]]);
    // Started again, it is not rebuilt a second time.
    await new ProjectorRuntime(events, readStore, [sleepProjection]).init();
    expect((await readStore.getCheckpoint('sleep'))?.position).toBe(head);
  });
});
