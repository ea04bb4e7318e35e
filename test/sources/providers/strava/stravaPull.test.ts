import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';
import type { PullContext } from '../../../../src/sources/shared/pullConnector.js';
import { stravaConnector } from '../../../../src/sources/providers/strava/pull.js';
import type { Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { grantedSandbox, parseAll, runPull, sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * Strava pulled from the sandbox over HTTP (issue 11 "Connectors for real providers" and
 * "Provider sandbox"): real OAuth, the activity list by `after`/`before` and `page`/`per_page`,
 * streams for every recorded activity, each activity one workout with its route, a repeated
 * pull identical, refusals and the 15-minute read limit classed for the sync engine.
 */
const NOW = new Date('2026-11-23T10:00:00.000Z');
const WINDOW = { start: new Date('2026-10-24T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') };

let sandbox: Sandbox, token: string;
beforeAll(async () => {
  ({ sandbox, token } = await grantedSandbox(stravaConnector, NOW));
});
afterAll(async () => {
  await sandbox?.close();
});

const workouts = (records: NormalizedRecord[]) => records.filter((r): r is Extract<NormalizedRecord, { kind: 'workout' }> => r.kind === 'workout');

describe('Strava pull', () => {
  it('pulls a month of activities with their streams and makes one workout per activity, routes and heart rate from the streams', async () => {
    const { payloads } = await runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW });
    const pages = payloads.filter((p) => p.dataType === 'activities');
    expect(pages[0]!.ref).toBe(`/api/v3/athlete/activities?after=${WINDOW.start.getTime() / 1000 - 1}&before=${WINDOW.end.getTime() / 1000}&page=1&per_page=100`);
    const listed = pages.flatMap((p) => JSON.parse(p.body.toString('utf8')) as { id: number; manual: boolean; start_date: string }[]);
    expect(listed.length).toBeGreaterThan(10);
    expect(payloads.filter((p) => p.dataType === 'streams')).toHaveLength(listed.filter((a) => !a.manual).length);
    const { records, rejected } = await parseAll(stravaConnector, payloads, NOW.toISOString());
    expect(rejected).toEqual([]);
    const ws = workouts(records);
    expect(ws.map((w) => w.external_id).sort()).toEqual(listed.map((a) => String(a.id)).sort());
    for (const w of ws) {
      expect(Date.parse(w.start_date)).toBeGreaterThanOrEqual(WINDOW.start.getTime());
      expect(Date.parse(w.start_date)).toBeLessThan(WINDOW.end.getTime());
      expect(w).toMatchObject({ provider: 'strava', source: 'strava' });
    }
    const rides = ws.filter((w) => w.type === 'cycling');
    expect(rides.length).toBeGreaterThan(0);
    for (const ride of rides) {
      expect(ride.route.length).toBeGreaterThan(100);
      expect(ride.active_energy_kcal).toBeGreaterThan(300);
      expect(ride.body_worn).toBe(true);
      expect(ride.route[0]!.timestamp).toBe(ride.start_date);
    }
    // A pool swim has heart rate but no route; a typed-in gym session neither, and is not worn.
    for (const swim of ws.filter((w) => w.type === 'swimming')) expect(swim).toMatchObject({ route: [], body_worn: true });
    for (const gym of ws.filter((w) => w.type === 'strength_training')) expect(gym).toMatchObject({ route: [], body_worn: false, metadata: { manual: true } });
    const heart = records.filter((r) => r.kind === 'quantity' && r.type === 'heart_rate');
    expect(heart.length).toBeGreaterThan(1000);
    // Trips abroad keep their own zone.
    expect(new Set(ws.map((w) => w.metadata.timezone))).toEqual(new Set(['Europe/Paris', 'America/New_York']));
    const ids = records.map((r) => r.external_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('answers the same records for the same window (same external ids and values)', async () => {
    const once = await parseAll(stravaConnector, (await runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    const twice = await parseAll(stravaConnector, (await runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW })).payloads, NOW.toISOString());
    expect(twice.records).toEqual(once.records);
  });

  it('asks for the next page while a page is full, and stops after a short one', async () => {
    const asked: string[] = [];
    const manual = (id: number) => ({ id, manual: true, sport_type: 'WeightTraining', start_date: '2026-11-01T08:00:00Z', elapsed_time: 1800, moving_time: 1800, timezone: '(GMT+01:00) Europe/Paris', utc_offset: 3600 });
    const http: PullContext['http'] = async (r) => {
      asked.push(r.query!.page!);
      const list = r.query!.page === '1' ? Array.from({ length: 100 }, (_, i) => manual(i + 1)) : [manual(101), manual(102)];
      const body = Buffer.from(JSON.stringify(list));
      return { status: 200, headers: new Headers(), body, json: <T>() => JSON.parse(body.toString('utf8')) as T };
    };
    const payloads = [];
    for await (const p of stravaConnector.pull({ window: WINDOW, trigger: 'backfill', dataType: null, http, providerUserId: null, scopes: [], signal: new AbortController().signal })) payloads.push(p);
    expect(asked).toEqual(['1', '2']);
    const { records } = await parseAll(stravaConnector, payloads, NOW.toISOString());
    expect(workouts(records)).toHaveLength(102);
  });

  it('pulls nothing without an activity scope', async () => {
    const { payloads } = await runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW, scopes: ['read'] });
    expect(payloads).toEqual([]);
  });

  it('a refused token, a 429 and a 5xx surface as ProviderCallError refused, rate_limited and unavailable', async () => {
    sandbox.failures.fail('strava', 'invalid_grant');
    await expect(runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'refused' });
    sandbox.failures.fail('strava', 'rate_limited', { retryAfterSeconds: 900 });
    await expect(runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 900 });
    sandbox.failures.fail('strava', 'server_error');
    await expect(runPull(sandbox, stravaConnector, { accessToken: token, window: WINDOW })).rejects.toMatchObject({ kind: 'unavailable' });
  });

  it('stops as rate_limited once the 15-minute read limit is spent (X-ReadRateLimit-Usage), waiting for the window’s end', async () => {
    const fresh = (await sandboxGrant(sandbox, stravaConnector)).accessToken;
    const year = { start: new Date('2026-01-01T00:00:00.000Z'), end: new Date('2026-11-23T00:00:00.000Z') };
    let stored = 0;
    const err = await (async () => {
      const { ctx } = await runPull(sandbox, stravaConnector, { accessToken: fresh, window: WINDOW, scopes: ['read'] });
      for await (const _ of stravaConnector.pull({ ...ctx, window: year, scopes: [] })) stored++;
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'rate_limited' });
    const wait = (err as { retryAfterSeconds: number }).retryAfterSeconds;
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(900);
    // The 100 calls the window allowed were all answered and stored; the 101st was never made.
    expect(stored).toBe(100);
  });
});
