import { gzipSync } from 'node:zlib';
import type { Observation } from 'fhir/r4.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { NormalizedRecord, ParseItem, SleepSessionRecord } from '../../../commands/ingestion/records.js';
import { healthKitParser } from '../../../src/sources/files/device-a/healthKitParser.js';
import { bufferByteSource } from '../../../src/sources/files/exportShared/byteSources.js';
import { samsungHealthDecoder } from '../../../src/sources/files/samsung-health/samsungHealthDecoder.js';
import { decodeSleep } from '../../../src/sources/providers/fitbit/decodeSleep.js';
import { zipEntries } from '../../fixtures/zip/buildZip.js';
import { decodeAll, ofType } from '../../sources/files/decodeAll.js';
import { samsungCsv } from '../../sources/files/samsung-health/samsungExport.js';
import { expectStatus, type TenantHandle, type TestApp, type UserBody } from '../../support/server.js';
import { allPages, ingest, recordsWorld } from './recordsHelper.js';

/**
 * contracts §17: a sleep session whose source reported no stages answers null deep, REM and light
 * durations over REST (and so in MCP, the archive and the console, which map the same answer),
 * and its FHIR Observation has no stage components. Each night is what the source's own decoder
 * makes of a file shaped like the real export, ingested as the ETL does.
 */

type Session = { id: number; external_id: string } & Record<string, unknown>;
let t: TestApp, tenant: TenantHandle, user: UserBody;

const sessionsOf = (items: ParseItem[] | NormalizedRecord[]): SleepSessionRecord[] =>
  ofType(items.map((i) => ('record' in i ? i.record : 'kind' in i ? i : null)).filter((r): r is NormalizedRecord => r !== null), 'sleep_session');

/** An Apple night before watchOS 9: in bed and asleep (unspecified), as the 2015 export has it. */
async function appleUnstaged(): Promise<SleepSessionRecord[]> {
  const src = { source_name: 'iPhone', source_bundle_id: 'com.apple.health.1', device_model: 'iPhone', product_type: 'iPhone7,2' };
  const line = (uuid: string, value: string, start: string, end: string) =>
    JSON.stringify({ kind: 'category', uuid, type: 'HKCategoryTypeIdentifierSleepAnalysis', value, start_date: start, end_date: end, ...src });
  const text = [
    line('A-1', 'HKCategoryValueSleepAnalysisInBed', '2015-03-01T22:00:00Z', '2015-03-02T06:00:00Z'),
    line('A-2', 'HKCategoryValueSleepAnalysisAsleep', '2015-03-01T22:30:00Z', '2015-03-02T05:30:00Z'),
  ].join('\n');
  const items: ParseItem[] = [];
  for await (const item of healthKitParser.parse(gzipSync(text), { provider: 'device-a', receivedAt: '2015-03-03T00:00:00.000Z', dataType: null })) items.push(item);
  return sessionsOf(items);
}

/** A Fitbit `classic` log (the Takeout's sleep files hold the Web API's logs, read by the same decoder). */
function fitbitClassic(): SleepSessionRecord[] {
  const log = {
    logId: 77,
    type: 'classic',
    startTime: '2024-02-01T23:00:00.000',
    endTime: '2024-02-02T01:00:00.000',
    minutesAsleep: 100,
    minutesAwake: 20,
    levels: {
      data: [
        { dateTime: '2024-02-01T23:00:00.000', level: 'asleep', seconds: 6000 },
        { dateTime: '2024-02-02T00:40:00.000', level: 'restless', seconds: 600 },
        { dateTime: '2024-02-02T00:50:00.000', level: 'awake', seconds: 600 },
      ],
    },
  };
  return sessionsOf(decodeSleep({ sleep: [log] }, { name: null, offsetMs: 0 }));
}

/** A Samsung export whose sessions have no stage file. */
async function samsungWithoutStages(): Promise<SleepSessionRecord[]> {
  const zip = await zipEntries([
    samsungCsv('com.samsung.shealth.sleep', ['*sleep_score', '*efficiency', '*sleep_duration', 'start_time', 'end_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[null, 90, 420, '2020-01-01 22:00:00.000', '2020-01-02 06:00:00.000', 'UTC+0000', 'watch-1', 'com.sec.android.app.shealth', 'sam-1']], { prefix: 'com.samsung.health.sleep.' }),
  ]);
  const { records } = await decodeAll(samsungHealthDecoder, bufferByteSource(zip));
  return sessionsOf(records);
}

/** A staged Apple night (watchOS 9 and later): core, deep and REM, no awake stretch. */
async function appleStaged(): Promise<SleepSessionRecord[]> {
  const src = { source_name: 'Watch', source_bundle_id: 'com.apple.health.2', device_model: 'Watch', product_type: 'Watch7,1' };
  const line = (uuid: string, value: string, start: string, end: string) =>
    JSON.stringify({ kind: 'category', uuid, type: 'HKCategoryTypeIdentifierSleepAnalysis', value, start_date: start, end_date: end, ...src });
  const text = [
    line('S-1', 'HKCategoryValueSleepAnalysisAsleepCore', '2026-11-01T23:00:00Z', '2026-11-02T01:00:00Z'),
    line('S-2', 'HKCategoryValueSleepAnalysisAsleepDeep', '2026-11-02T01:00:00Z', '2026-11-02T02:00:00Z'),
  ].join('\n');
  const items: ParseItem[] = [];
  for await (const item of healthKitParser.parse(gzipSync(text), { provider: 'device-a', receivedAt: '2026-11-03T00:00:00.000Z', dataType: null })) items.push(item);
  return sessionsOf(items);
}

let apple: SleepSessionRecord, fitbit: SleepSessionRecord, samsung: SleepSessionRecord, staged: SleepSessionRecord;
beforeAll(async () => {
  ({ t, tenant, user } = await recordsWorld('unstaged-sleep'));
  // Each decoder makes exactly one session of its night.
  const one = (sessions: SleepSessionRecord[]) => {
    expect(sessions).toHaveLength(1);
    return sessions[0]!;
  };
  apple = one(await appleUnstaged());
  staged = one(await appleStaged());
  fitbit = one(fitbitClassic());
  samsung = one(await samsungWithoutStages());
  await ingest(t, tenant.id, user.id, 'sleep_session', [apple, staged]);
  await ingest(t, tenant.id, user.id, 'sleep_session', [fitbit]);
  await ingest(t, tenant.id, user.id, 'sleep_session', [samsung]);
});
afterAll(async () => {
  await t?.close();
});

const served = async () => (await allPages<Session>(t, tenant.apiKey, `/v1/users/${user.id}/sleep`, { view: 'all' })).flatMap((p) => p.data);
const byExternalId = async (externalId: string) => (await served()).find((s) => s.external_id === externalId)!;
const stagesOf = (s: Record<string, unknown>) => [s.deep_sleep_seconds, s.rem_sleep_seconds, s.light_sleep_seconds, s.awake_seconds];
async function fhirStages(id: number): Promise<string[]> {
  const res = await t.call('GET', `/v1/users/${user.id}/fhir/Observation/sleep-${id}`, { key: tenant.apiKey });
  expectStatus(res, 200);
  return ((res.json() as Observation).component ?? []).map((c) => c.code.text ?? '');
}

describe('sleep without stages reads as not measured, not as zero (contracts §17)', () => {
  it('an Apple night of only in-bed and asleep (unspecified) samples answers null deep, REM, light and awake over REST, its time asleep kept', async () => {
    const s = await byExternalId(apple.external_id);
    expect(stagesOf(s)).toEqual([null, null, null, null]);
    expect(s.total_sleep_seconds).toBe(7 * 3600);
  });

  it("that night's FHIR Observation has no deep, REM or light component, only the time asleep", async () => {
    const s = await byExternalId(apple.external_id);
    expect(await fhirStages(s.id)).toEqual([]);
  });

  it('a Fitbit classic log answers null stages; its awake and restless time, which Fitbit reported, stays a number', async () => {
    const s = await byExternalId(fitbit.external_id);
    expect(stagesOf(s)).toEqual([null, null, null, 1200]);
    expect(await fhirStages(s.id)).toEqual([]);
  });

  it('a Samsung session without a stage file answers null stages and awake time, and no FHIR stage component', async () => {
    const s = await byExternalId(samsung.external_id);
    expect(stagesOf(s)).toEqual([null, null, null, null]);
    expect(s.total_sleep_seconds).toBe(420 * 60);
    expect(await fhirStages(s.id)).toEqual([]);
  });

  it('a staged night keeps its numbers, 0 for a stage it did not have, and every stage component in FHIR', async () => {
    const s = await byExternalId(staged.external_id);
    expect(stagesOf(s)).toEqual([3600, 0, 7200, 0]);
    expect(await fhirStages(s.id)).toEqual(['Deep sleep', 'Light sleep', 'REM sleep']);
  });
});

describe('the OpenAPI document says the stage durations may be null (contracts §17)', () => {
  it('every schema with deep, REM, light and awake durations allows null for each', async () => {
    const res = await t.call('GET', '/openapi.yaml');
    expectStatus(res, 200);
    const found: Record<string, unknown>[] = [];
    const walk = (v: unknown, depth: number): void => {
      if (depth > 40 || v === null || typeof v !== 'object') return;
      const props = (v as { properties?: Record<string, unknown> }).properties;
      if (props && 'deep_sleep_seconds' in props) found.push(props);
      for (const child of Object.values(v)) walk(child, depth + 1);
    };
    walk(parse(res.body), 0);
    expect(found.length).toBeGreaterThan(0);
    const allowsNull = (s: unknown) => JSON.stringify(s).includes('"nullable":true') || JSON.stringify(s).includes('"null"');
    for (const props of found) for (const f of ['deep_sleep_seconds', 'rem_sleep_seconds', 'light_sleep_seconds', 'awake_seconds']) expect(allowsNull(props[f]), f).toBe(true);
  });
});
