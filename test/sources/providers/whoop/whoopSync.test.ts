import { describe, expect, it } from 'vitest';
import { sandboxBackfill } from '../sandboxBackfill.js';

/**
 * WHOOP from consent to reads (issue 11 "Connectors for real providers"): a user connects through
 * the sandbox's OAuth pages, the backfill run pulls the sandbox's WHOOP API with the real
 * connector, the ETL decodes the stored payloads, and the read routes answer WHOOP's records.
 */
const backfilled = sandboxBackfill('whoop');

describe('WHOOP through the sync engine and the ETL', () => {
  it('a backfill on connect stores WHOOP\u2019s pages, and sleep, recovery (HRV as RMSSD), workouts and cycles read back with provider and source whoop', async () => {
    const { backfill, list, rejected } = await backfilled();
    expect(backfill).toMatchObject({ trigger: 'backfill', status: 'succeeded' });
    expect(backfill.objects_stored).toBeGreaterThan(5);
    const sleep = await list('sleep');
    expect(sleep.length).toBeGreaterThanOrEqual(25);
    expect(sleep.every((s) => s.provider === 'whoop' && s.source === 'whoop')).toBe(true);
    expect((await list('samples', { type: 'readiness_score' })).length).toBeGreaterThanOrEqual(25);
    expect((await list('samples', { type: 'hrv_rmssd' })).length).toBeGreaterThanOrEqual(25);
    expect(await list('samples', { type: 'hrv_sdnn' })).toEqual([]);
    expect((await list('workouts')).length).toBeGreaterThan(5);
    expect((await list('daily')).length).toBeGreaterThanOrEqual(25);
    expect(await rejected()).toEqual([]);
  });
});
