import { afterAll, describe, expect, it } from 'vitest';
import { openStores } from '../../src/app/stores.js';
import { loadConfig } from '../../src/config.js';
import { projections } from '../../projections/index.js';
import { listDeadLetters } from '../../src/projector/deadLetters.js';
import { ProjectorRuntime } from '../../src/projector/projectorRuntime.js';
import { ProjectorThread } from '../../src/projector/threadedRunner.js';
import { sleepSession } from '../projections/records/fixtures.js';
import { tempDir } from '../support/tmp.js';

/**
 * Issue 20, finding 2: the record projections of every tenant run on one projector thread, which
 * used to restart from the same checkpoint and die on the same batch for ever. A thread that dies
 * while applying a batch is counted by its parent against that batch; the next thread narrows it
 * to single events and applies one batch at a time; the event that kills the thread on every
 * attempt is dead-lettered unapplied, and the events after it apply.
 */
const dataDir = tempDir('wellstream-thread-death-');
// Short pauses between attempts (the default schedule is 1, 2, 4, 8 seconds).
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', PROJECTION_RETRY_SCHEDULE: '0.05,0.05,0.05,0.05' } as NodeJS.ProcessEnv);
const stores = await openStores(config);
let thread: ProjectorThread | null = null;

afterAll(async () => {
  await thread?.stop();
  await stores.eventStore.close();
  await stores.readStore.close();
  await stores.rawStore.close();
});

const USER = '00000000-0000-4000-8000-0000000000aa';
const night = (id: string, day: number) =>
  sleepSession({ external_id: id, bedtime_start: `2026-11-${String(day).padStart(2, '0')}T22:00:00.000Z`, bedtime_end: `2026-11-${String(day + 1).padStart(2, '0')}T06:00:00.000Z`, phases: [] });
const append = (id: string, day: number) =>
  stores.eventStore.appendToStream(`ingest-${USER}-${id}`, [
    { type: 'sleep_sessions.ingested', data: { job: id, user_id: USER, tenant_id: 't', provider: 'device-a', ingested_at: '2026-11-20T00:00:00.000Z', batch: 0, records: [night(id, day)] } },
  ]);

describe('the projector thread dies on an event (issue 20: no crash loop)', () => {
  it('counts each death against the batch under way, narrows it, and dead-letters the event that kills the thread every time; the rest applies', { timeout: 60_000 }, async () => {
    // Declared by the parent, as the service does before it starts the thread.
    await new ProjectorRuntime(stores.eventStore, stores.readStore, projections).init();
    await append('good-1', 1);
    const killer = await append('thread-killer', 3);
    await append('good-2', 5);
    const sleep = projections.filter((p) => p.name === 'sleep');
    thread = new ProjectorThread(config, sleep, stores.eventStore, undefined, 10_000, undefined, new URL('./fixtures/dyingProjectorThread.ts', import.meta.url));
    await thread.start();
    const head = await stores.eventStore.headPosition();
    await thread.waiters.get('sleep')!.waitFor(head, 55_000);

    const ids = (await stores.readStore.find('sleep_sessions', { sort: [['_id', 1]] })).map((d) => d.external_id).sort();
    expect(ids).toEqual(['good-1', 'good-2']);
    const letters = (await listDeadLetters(stores.readStore)).filter((d) => d.projection === 'sleep');
    expect(letters).toEqual([expect.objectContaining({ _id: `sleep@${killer.lastPosition}`, position: killer.lastPosition, status: 'open', error: expect.stringMatching(/projector thread died on every attempt.*exited with code 7/) })]);
    expect((await stores.readStore.getCheckpoint('sleep'))?.position).toBe(head);
  });
});

describe('a projector thread that died is not started again once stopped', () => {
  it('a start whose thread dies before it is ready returns, and stop() during the pause before the restart cancels it: no thread opens the stores after the context closed', { timeout: 30_000 }, async () => {
    const dir = tempDir('wellstream-thread-death-stop-');
    // One pause of 0.4 s before the restart: stop() comes within it.
    const cfg = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', PROJECTION_RETRY_SCHEDULE: '0.4' } as NodeJS.ProcessEnv);
    const own = await openStores(cfg);
    try {
      await new ProjectorRuntime(own.eventStore, own.readStore, projections).init();
      await own.eventStore.appendToStream(`ingest-${USER}-thread-killer`, [
        { type: 'sleep_sessions.ingested', data: { job: 'k', user_id: USER, tenant_id: 't', provider: 'device-a', ingested_at: '2026-11-20T00:00:00.000Z', batch: 0, records: [night('thread-killer', 3)] } },
      ]);
      const sleep = projections.filter((p) => p.name === 'sleep');
      const dying = new ProjectorThread(cfg, sleep, own.eventStore, undefined, 10_000, undefined, new URL('./fixtures/dyingProjectorThread.ts', import.meta.url));
      const state = dying as unknown as { worker: unknown; restartTimer: unknown };
      await dying.start();
      // The thread dies on the event; its parent schedules a restart.
      for (let i = 0; i < 500 && state.restartTimer === null; i++) await new Promise((r) => setTimeout(r, 10));
      expect(state.restartTimer, 'the thread died and a restart is pending').not.toBeNull();
      await dying.stop();
      await new Promise((r) => setTimeout(r, 800));
      expect(state.worker, 'no thread started after stop()').toBeNull();
      expect(state.restartTimer).toBeNull();
    } finally {
      await own.eventStore.close();
      await own.readStore.close();
      await own.rawStore.close();
    }
  });
});
