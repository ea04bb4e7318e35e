import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/server.js';
import { PROJECTION_STALLS, type StallDoc } from '../../src/projector/projectionStalls.js';

describe('GET /v1/admin/runtime (instance admin diagnostics)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers event-loop delay percentiles and memory to the admin key only (Authentication 5, 9)', async () => {
    const tenant = await t.createTenant();
    expect((await t.call('GET', '/v1/admin/runtime')).statusCode).toBe(401);
    expect((await t.call('GET', '/v1/admin/runtime', { key: tenant.apiKey })).statusCode).toBe(403);
    const res = await t.call('GET', '/v1/admin/runtime', { key: t.adminKey });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.event_loop_delay_ms.p99).toBeGreaterThanOrEqual(body.event_loop_delay_ms.p50);
    expect(body.max_rss_bytes).toBeGreaterThanOrEqual(body.rss_bytes / 2);
  });

  it('reset starts a new measurement window, recorded in the admin audit log', async () => {
    const before = (await t.call('GET', '/v1/admin/runtime', { key: t.adminKey })).json().since;
    await new Promise((r) => setTimeout(r, 5));
    const res = await t.call('POST', '/v1/admin/runtime/reset', { key: t.adminKey });
    expect(res.statusCode).toBe(200);
    expect(Date.parse(res.json().since)).toBeGreaterThan(Date.parse(before));
    const audit = (await t.call('GET', '/v1/admin/audit-log', { key: t.adminKey })).json();
    expect(JSON.stringify(audit)).toContain('runtime.reset');
  });

  it('contracts §19: lists the projections that cannot move on (stored by their runners, whatever process or thread runs them), and none once they move', async () => {
    expect((await t.call('GET', '/v1/admin/runtime', { key: t.adminKey })).json().projection_stalls).toEqual([]);
    const since = new Date().toISOString();
    const stall: StallDoc = { _id: 'records', projection: 'records', state: 'waiting', kind: 'busy', position: 7, event_position: null, event_type: null, error: 'SqliteError: database is locked', since, retries: 12, updated_at: since };
    await t.ctx.readStore.applyChanges([{ op: 'put', collection: PROJECTION_STALLS, doc: stall }]);
    const body = (await t.call('GET', '/v1/admin/runtime', { key: t.adminKey })).json();
    expect(body.projection_stalls).toEqual([{ projection: 'records', state: 'waiting', kind: 'busy', position: 7, since, retries: 12, error: 'SqliteError: database is locked' }]);
    await t.ctx.readStore.applyChanges([{ op: 'delete', collection: PROJECTION_STALLS, id: 'records' }]);
    expect((await t.call('GET', '/v1/admin/runtime', { key: t.adminKey })).json().projection_stalls).toEqual([]);
  });
});
