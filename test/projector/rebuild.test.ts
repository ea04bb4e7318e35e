import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { defineProjection, type Projection } from '../../src/projector/projection.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import type { Change } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

/**
 * What `projections rebuild` promises about its transactions (src/projector/rebuild.ts): its
 * batches may be committed several at a time, but the rebuild is committed whole before it
 * answers, and one interrupted leaves the projection `rebuilding` until it is run again.
 */
const ROWS_PER_EVENT = 1000;
const EVENTS = 120;

const projection: Projection = defineProjection({
  name: 'rows',
  collections: [{ name: 'rows', indexes: [{ fields: [['group', 1]] }] }],
  eventTypes: ['rows.added'],
  evolve: (e): Change[] =>
    Array.from({ length: ROWS_PER_EVENT }, (_, i): Change => ({ op: 'update', collection: 'rows', id: `${e.globalPosition}-${i}`, upsert: true, set: { group: e.globalPosition % 7, i } })),
});

async function logOf(path: string): Promise<EventStore> {
  const events = new SqliteEventStore({ path });
  for (let n = 0; n < EVENTS; n++) await events.appendToStream(`rows-${n}`, [{ type: 'rows.added', data: {} }]);
  return events;
}

describe('projections rebuild: transactions (issue 38, rebuild in bulk)', () => {
  it('commits the whole rebuild before it answers: another connection sees every row and the checkpoint live at the last event', async () => {
    const dir = tempDir();
    const events = await logOf(join(dir, 'events.sqlite'));
    const path = join(dir, 'read.sqlite');
    const store = new SqliteReadStore({ path });
    await new ProjectorRuntime(events, store, [projection]).rebuild(undefined);
    const other = new SqliteReadStore({ path });
    expect(await other.count('rows')).toBe(EVENTS * ROWS_PER_EVENT);
    expect(await other.getCheckpoint('rows')).toMatchObject({ status: 'live', position: await events.headPosition() });
    await other.close();
    await store.close();
  });

  it('one interrupted mid-way leaves the projection rebuilding, as another connection sees it, and run again equals a clean rebuild', async () => {
    const dir = tempDir();
    const events = await logOf(join(dir, 'events.sqlite'));
    const path = join(dir, 'read.sqlite');
    const store = new SqliteReadStore({ path });
    const runtime = new ProjectorRuntime(events, store, [projection]);
    await runtime.rebuild(undefined);
    // The process dies after the third batch of 20,000 changes (as far as the rebuild can tell).
    let batches = 0;
    const dying = () => {
      if (++batches === 3) throw new Error('killed');
    };
    await expect(runtime.rebuild(undefined, dying)).rejects.toThrow('killed');
    // The command closes its stores on the way out (src/cli/shared.ts withContext).
    await store.close();
    const other = new SqliteReadStore({ path });
    const seen = await other.getCheckpoint('rows');
    expect(seen?.status).toBe('rebuilding');
    expect(seen!.position).toBeGreaterThan(0);
    expect(seen!.position).toBeLessThan(await events.headPosition());
    const again = new SqliteReadStore({ path });
    await new ProjectorRuntime(events, again, [projection]).rebuild(undefined);
    expect(await other.count('rows')).toBe(EVENTS * ROWS_PER_EVENT);
    expect(await other.getCheckpoint('rows')).toMatchObject({ status: 'live', position: await events.headPosition() });
    await other.close();
    await again.close();
  });
});
