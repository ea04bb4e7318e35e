import { describe, expect, it } from 'vitest';
import { sandboxBackfill } from '../sandboxBackfill.js';

/**
 * Oura from consent to reads (issue 11 "Connectors for real providers"): a user connects through
 * the sandbox's OAuth pages, the backfill run pulls the sandbox's Oura API with the real
 * connector, the ETL decodes the stored payloads, and the read routes answer Oura's records.
 */
const backfilled = sandboxBackfill('oura');

describe('Oura through the sync engine and the ETL', () => {
  it('a backfill on connect stores Oura\u2019s pages, and sleep, HRV (RMSSD), scores, workouts and daily summaries read back with provider and source oura', async () => {
    const { backfill, list, rejected } = await backfilled();
    expect(backfill).toMatchObject({ trigger: 'backfill', status: 'succeeded' });
    expect(backfill.objects_stored).toBeGreaterThan(10);
    const sleep = await list('sleep');
    expect(sleep.length).toBeGreaterThanOrEqual(25);
    expect(sleep.every((s) => s.provider === 'oura' && s.source === 'oura')).toBe(true);
    expect((await list('samples', { type: 'readiness_score' })).length).toBeGreaterThanOrEqual(25);
    expect((await list('samples', { type: 'hrv_rmssd' })).length).toBeGreaterThan(25 * 60);
    expect(await list('samples', { type: 'hrv_sdnn' })).toEqual([]);
    expect((await list('workouts')).length).toBeGreaterThan(5);
    expect((await list('daily')).length).toBeGreaterThanOrEqual(25);
    expect(await rejected()).toEqual([]);
  });
});
