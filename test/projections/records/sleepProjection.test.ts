import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childRecordId, recordId, recordKey } from '../../../projections/records/recordIds.js';
import { sleepProjection, type SleepPhaseDoc, type SleepSessionDoc } from '../../../projections/records/sleepProjection.js';
import { phase, sleepSession } from './fixtures.js';
import { ingested, INGESTED_AT, projectionHarness, PROVIDER, TENANT, USER } from './harness.js';

let h: Awaited<ReturnType<typeof projectionHarness>>;
beforeAll(async () => {
  h = await projectionHarness(sleepProjection);
});
afterAll(async () => {
  await h.close();
});

const byStart = (a: SleepPhaseDoc, b: SleepPhaseDoc) => a.start_date.localeCompare(b.start_date);

describe('sleep projection (Resources: Sleep session, Sleep phase)', () => {
  it('stores a session (without its phases) keyed by user, provider and external_id, with owner fields and day', async () => {
    await h.apply(ingested('sleep_session', 4, [sleepSession(), sleepSession({ external_id: 'night-2', bedtime_start: '2026-11-02T22:00:00.000Z', bedtime_end: '2026-11-03T06:00:00.000Z', phases: [phase('deep', '2026-11-02T22:00:00Z', '2026-11-02T23:00:00Z')] })]));
    const sessions = (await h.all<SleepSessionDoc>('sleep_sessions')).sort((a, b) => a.id - b.id);
    expect(sessions.map((s) => [s._id, s.id])).toEqual([
      [recordKey(USER, PROVIDER, 'night-1'), recordId(4, 0)],
      [recordKey(USER, PROVIDER, 'night-2'), recordId(4, 1)],
    ]);
    expect(sessions[0]).toMatchObject({ user_id: USER, tenant_id: TENANT, ingested_at: INGESTED_AT, day: '2026-11-01', total_sleep_seconds: 25_200, sleep_score: 82 });
    expect(sessions[0]).not.toHaveProperty('phases');
    expect(sessions[0]).not.toHaveProperty('kind');
  });

  it('stores phases with session_key, duration_s and ids position × 1 000 000 + a counter over all phases of the event', async () => {
    const phases = (await h.all<SleepPhaseDoc>('sleep_phases')).sort(byStart);
    expect(phases.map((p) => [p.phase, p.duration_s, p.id, p.session_key])).toEqual([
      ['light', 3600, childRecordId(4, 0), recordKey(USER, PROVIDER, 'night-1')],
      ['deep', 5400, childRecordId(4, 1), recordKey(USER, PROVIDER, 'night-1')],
      ['rem', 19_800, childRecordId(4, 2), recordKey(USER, PROVIDER, 'night-1')],
      ['deep', 3600, childRecordId(4, 3), recordKey(USER, PROVIDER, 'night-2')],
    ]);
    expect(phases[0]).toMatchObject({ provider: PROVIDER, source: 'apple', device: 'Apple Watch (Watch7,1)', user_id: USER, tenant_id: TENANT, ingested_at: INGESTED_AT, day: '2026-11-01' });
  });

  it('a re-sent session keeps its first id and has its phases replaced; other sessions keep theirs', async () => {
    await h.apply(
      ingested('sleep_session', 9, [
        sleepSession({
          sleep_score: 90,
          phases: [phase('awake', '2026-11-01T22:00:00Z', '2026-11-01T22:10:00Z'), phase('asleep', '2026-11-01T22:10:00Z', '2026-11-02T06:00:00Z')],
        }),
      ]),
    );
    const sessions = await h.all<SleepSessionDoc>('sleep_sessions');
    expect(sessions).toHaveLength(2);
    expect(sessions.find((s) => s.external_id === 'night-1')).toMatchObject({ id: recordId(4, 0), sleep_score: 90 });
    const phases = (await h.all<SleepPhaseDoc>('sleep_phases')).sort(byStart);
    expect(phases.map((p) => [p.phase, p.id])).toEqual([
      ['awake', childRecordId(9, 0)],
      ['asleep', childRecordId(9, 1)],
      ['deep', childRecordId(4, 3)],
    ]);
  });

  it('another provider with the same external_id is another session', async () => {
    await h.apply(ingested('sleep_session', 11, [sleepSession({ provider: 'device-b' })], { provider: 'device-b' }));
    expect(await h.store.count('sleep_sessions')).toBe(3);
    expect(await h.store.count('sleep_phases', { session_key: recordKey(USER, 'device-b', 'night-1') })).toBe(3);
  });

  it('an event stored before contracts §17 (an unstaged night written with zero stages) is stored with null stages, so a rebuild reads old events the new way', async () => {
    const old = sleepSession({
      external_id: 'night-unstaged',
      deep_sleep_seconds: 0,
      rem_sleep_seconds: 0,
      light_sleep_seconds: 0,
      awake_seconds: 0,
      phases: [phase('in_bed', '2026-11-05T22:00:00Z', '2026-11-06T06:00:00Z'), phase('asleep', '2026-11-05T22:30:00Z', '2026-11-06T05:30:00Z')],
    });
    await h.apply(ingested('sleep_session', 12, [old]));
    const stored = (await h.all<SleepSessionDoc>('sleep_sessions')).find((s) => s.external_id === 'night-unstaged');
    expect(stored).toMatchObject({ deep_sleep_seconds: null, rem_sleep_seconds: null, light_sleep_seconds: null, awake_seconds: null, total_sleep_seconds: 25_200 });
  });

  it('evolve is pure: the same event gives the same changes', () => {
    const e = ingested('sleep_session', 2, [sleepSession()]);
    expect(sleepProjection.evolve(e, 1)).toEqual(sleepProjection.evolve(e, 1));
  });
});
