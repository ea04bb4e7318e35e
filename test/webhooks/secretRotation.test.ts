import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resealWebhookSecret } from '../../commands/webhooks/resealWebhookSecret.js';
import { createContext } from '../../src/app/context.js';
import type { AppContext } from '../../src/server/appContext.js';
import { loadConfig } from '../../src/config.js';
import { buildServer } from '../../src/server/buildServer.js';
import { UNSEALABLE_ERROR } from '../../src/processes/webhooks/deliveryLimits.js';
import { tempDir } from '../support/tmp.js';
import { expectStatus, type Response } from '../support/server.js';
import { eventually, Receiver } from './receiver.js';

/**
 * The service restarted on one DATA_DIR under changing sealing keys (docs/erasure.md "Rotating
 * SEALING_KEY"), with a receiver that verifies every request with `standardwebhooks` and the
 * secret the endpoint was created with: A; then B with A in SEALING_KEY_PREVIOUS; then B alone.
 */
const ADMIN_API_KEY = `svc_ak_${'a1B2c3D4e5'.repeat(4)}xyz`;
const A = randomBytes(32).toString('base64');
const B = randomBytes(32).toString('base64');
const dataDir = tempDir('wellstream-webhook-rotation-');

type Running = { ctx: AppContext; call: (method: 'GET' | 'POST', url: string, key: string, body?: unknown) => Promise<Response>; close: () => Promise<void> };

async function start(env: Record<string, string>): Promise<Running> {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_API_KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,0.05,0.05,0.05,0.05,0.05,0.05,0.05', ...env } as NodeJS.ProcessEnv);
  const ctx = await createContext(config);
  const app = await buildServer(ctx);
  return {
    ctx,
    call: (method, url, key, body) => app.inject({ method, url, headers: { authorization: `Bearer ${key}` }, ...(body === undefined ? {} : { payload: body as object }) }),
    close: async () => {
      await app.close();
      await ctx.close();
    },
  };
}

describe('webhook signing secrets survive a SEALING_KEY rotation', () => {
  let r: Receiver;
  let s: Running | undefined;
  let tenantKey = '';
  /** Resealed in the rotation's second half. */
  const kept = { path: `/${randomUUID()}`, id: '' };
  /** Left sealed under A: what a rotation that skipped the reseal leaves behind. */
  const skipped = { path: `/${randomUUID()}`, id: '' };

  beforeAll(async () => {
    r = await Receiver.start();
  });
  afterAll(async () => {
    await s?.close();
    await r.close();
  });

  const createUser = async (ref: string): Promise<string> => {
    const res = await s!.call('POST', '/v1/users', tenantKey, { external_ref: ref });
    expectStatus(res, 201);
    return (res.json() as { id: string }).id;
  };
  const verifiedFor = (path: string, userId: string) =>
    r.at(path).filter((x) => x.verified !== null && (x.verified.data as { user_id?: string }).user_id === userId);

  it('an endpoint created under SEALING_KEY=A keeps delivering verified signatures after a restart with SEALING_KEY=B and SEALING_KEY_PREVIOUS=A', async () => {
    s = await start({ SEALING_KEY: A });
    const tenant = await s.call('POST', '/v1/admin/tenants', ADMIN_API_KEY, { name: 'rotation' });
    expectStatus(tenant, 201);
    tenantKey = (tenant.json() as { api_key: string }).api_key;
    for (const ep of [kept, skipped]) {
      const res = await s.call('POST', '/v1/webhooks', tenantKey, { url: r.url(ep.path), event_types: ['user.created'] });
      expectStatus(res, 201);
      const body = res.json() as { id: string; secret: string };
      ep.id = body.id;
      r.trust(ep.path, body.secret);
    }
    const u1 = await createUser('u1');
    await r.waitFor(() => verifiedFor(kept.path, u1).length === 1 && verifiedFor(skipped.path, u1).length === 1);
    await s.close();

    s = await start({ SEALING_KEY: B, SEALING_KEY_PREVIOUS: A });
    const u2 = await createUser('u2');
    await r.waitFor(() => verifiedFor(kept.path, u2).length === 1 && verifiedFor(skipped.path, u2).length === 1);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
  });

  it('the reseal appends webhook_endpoint.secret_resealed with the same secret under B (never in plain); afterwards SEALING_KEY=B alone delivers verified signatures', async () => {
    const first = await resealWebhookSecret(s!.ctx.eventStore, s!.ctx.webhookSecrets, { endpointId: kept.id, at: new Date().toISOString() });
    expect(first).toEqual({ live: true, resealed: true });
    const again = await resealWebhookSecret(s!.ctx.eventStore, s!.ctx.webhookSecrets, { endpointId: kept.id, at: new Date().toISOString() });
    expect(again).toEqual({ live: true, resealed: false });
    const events = await s!.ctx.eventStore.readStream(`webhook-${kept.id}`);
    const resealed = events.filter((e) => e.type === 'webhook_endpoint.secret_resealed');
    expect(resealed).toHaveLength(1);
    const sealed = (resealed[0]!.data as { secret_sealed: string }).secret_sealed;
    expect(s!.ctx.webhookSecrets.isCurrent(sealed)).toBe(true);
    expect(JSON.stringify(resealed[0]!.data)).not.toContain('whsec_');
    // The running engine applies the event too: the next delivery is signed with the same secret.
    const u3 = await createUser('u3');
    await r.waitFor(() => verifiedFor(kept.path, u3).length === 1);
    await s!.close();

    s = await start({ SEALING_KEY: B });
    const u4 = await createUser('u4');
    await r.waitFor(() => verifiedFor(kept.path, u4).length === 1);
    expect(r.received.filter((x) => x.verified === null)).toEqual([]);
  });

  it('without the previous key and without the reseal, nothing is sent and the delivery says why', async () => {
    const u5 = await createUser('u5');
    await r.waitFor(() => verifiedFor(kept.path, u5).length === 1);
    const failed = await eventually(async () => {
      const res = await s!.call('GET', `/v1/webhooks/${skipped.id}/deliveries`, tenantKey);
      expectStatus(res, 200);
      const all = (res.json() as { data: { payload: { data: { user_id: string } }; attempts: number; last_error: string | null; last_status_code: number | null }[] }).data;
      return all.find((d) => d.payload.data.user_id === u5 && d.attempts > 0);
    });
    expect(failed).toMatchObject({ last_error: UNSEALABLE_ERROR, last_status_code: null });
    expect(r.at(skipped.path).filter((x) => (JSON.parse(x.body) as { data: { user_id?: string } }).data.user_id === u5)).toEqual([]);
  });
});
