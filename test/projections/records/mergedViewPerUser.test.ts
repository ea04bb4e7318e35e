import { describe, expect, it } from 'vitest';
import { mergedFlagsDerivation, type MemberSession, type MergedKind } from '../../../projections/records/mergedView/mergedFlags.js';
import { sampleMergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { RecordedEvent } from '../../../src/eventstore/eventStore.js';
import type { Change, PositionedChange, ReadStore, UpdateChange } from '../../../src/readstore/readStore.js';

/**
 * A session holds what it loaded until its flush (a block session: every decoded day of the users
 * it staged). A batch of many users' records must therefore be staged user by user, each user's
 * session flushed before the next is opened, or a batch of a few hundred phones' uploads holds
 * all their days at once (the projector thread ran out of heap so).
 */
describe('merged view: a batch of several users', () => {
  const upsert = (user: string, key: string, start: string): Change => ({
    op: 'update',
    collection: 'recs',
    id: key,
    upsert: true,
    set: { user_id: user, type: 'heart_rate', start_date: start, end_date: start, source: 's', provider: 'p' },
    setOnInsert: { id: 1 },
  });

  it('stages, evaluates and flushes one user at a time, each in a session of its own, the batch in one chunk', async () => {
    const log: string[] = [];
    let opened = 0;
    const kind: MergedKind = {
      collection: 'recs',
      partitionField: 'type',
      startField: 'start_date',
      endField: 'end_date',
      rule: (type, priorities) => sampleMergeRule(type, priorities),
      ordersCollection: 'orders',
      session: (): MemberSession => {
        const n = ++opened;
        return {
          async stage(records) {
            const ups = records as UpdateChange[];
            log.push(`stage ${n}: ${ups.map((c) => c.id).join(',')} of ${[...new Set(ups.map((c) => c.set!.user_id))].join(',')}`);
            return ups.map((c) => ({ ...c.set!, _id: c.id }));
          },
          async load(userId) {
            log.push(`load ${n}: ${userId}`);
            return new Map();
          },
          partitions: async () => [],
          nextStart: async () => null,
          users: async () => [],
          flag: () => {},
          flush(out) {
            log.push(`flush ${n}`);
            out.push({ op: 'put', collection: 'blocks', doc: { _id: `b${n}` } });
          },
        };
      },
    };
    const derivation = mergedFlagsDerivation(kind);
    const readStore = { get: async () => null } as unknown as ReadStore;
    const evolved = [
      upsert('u1', 'a', '2026-11-01T10:00:00.000Z'),
      { op: 'put', collection: 'other', doc: { _id: 'x' } },
      upsert('u2', 'b', '2026-11-01T11:00:00.000Z'),
      upsert('u1', 'c', '2026-11-01T12:00:00.000Z'),
    ].map((c, index) => ({ ...c, position: 1, index }) as PositionedChange);
    const events = [{ type: 'samples.ingested', data: {} }] as unknown as RecordedEvent[];
    const chunks: Change[][] = [];
    for await (const chunk of derivation.derive(events, evolved, readStore)) chunks.push(chunk);

    expect(log.filter((l) => !l.startsWith('load'))).toEqual(['stage 1: a,c of u1', 'flush 1', 'stage 2: b of u2', 'flush 2']);
    expect(log.filter((l) => l.startsWith('load 1')).every((l) => l.endsWith('u1'))).toBe(true);
    expect(log.indexOf('load 2: u2')).toBeGreaterThan(log.indexOf('flush 1'));
    // The folded collection's upserts are taken out of the batch; the rest stays, in order.
    expect(evolved.map((c) => c.collection)).toEqual(['other']);
    expect(chunks).toEqual([[{ op: 'put', collection: 'blocks', doc: { _id: 'b1' } }, { op: 'put', collection: 'blocks', doc: { _id: 'b2' } }]]);
  });
});
