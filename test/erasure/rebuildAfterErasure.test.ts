import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projections } from '../../projections/index.js';
import { SAMPLE_KEY_RUNS, storedLocators } from '../../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_KEYS } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { createContext } from '../../src/app/context.js';
import { createLogger } from '../../src/app/logger.js';
import { loadConfig } from '../../src/config.js';
import type { Doc, ReadStore } from '../../src/readstore/readStore.js';
import { newSecret } from '../../src/shared/secrets.js';
import { fixtureA, fixtureB } from '../ingest/uploadHelpers.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { uploadMarked } from './markedData.js';

/**
 * Issue acceptance: "delete one of two users, rebuild every projection, and show the deleted
 * user's data absent and the other user's intact; erase one of two providers likewise". The
 * rebuild replays the whole log from the start in a process of its own (as `npm run cli --
 * projections rebuild` does), with the service stopped.
 */
const ADMIN_API_KEY = newSecret('admin');
const dataDir = tempDir('wellstream-erasure-rebuild-');
let t: TestApp;
let tenant: TenantHandle;
let x: string;
let y: string;

/**
 * Every document of every projection's collections, by collection; the samples' locators as one
 * set (sample_keys and the recent tier's runs, storedLocators: a rebuild writes sample_keys only).
 */
async function everything(readStore: ReadStore): Promise<Map<string, Doc[]>> {
  const out = new Map<string, Doc[]>();
  for (const p of projections) {
    for (const c of p.collections) {
      if (c.name === SAMPLE_KEY_RUNS) continue;
      const docs: Doc[] = [];
      if (c.name === SAMPLE_KEYS) for await (const k of storedLocators(readStore)) docs.push(k);
      else docs.push(...(await readStore.find(c.name, { sort: [['_id', 1]] })));
      out.set(c.name, docs);
    }
  }
  return out;
}

/** The merged view's flag on a sample: a rebuild leaves it out where the live projection wrote false; both mean listed. */
const normalised = (d: Doc): Doc => {
  if (d.hidden !== false) return d;
  const { hidden: _hidden, ...rest } = d;
  return rest as Doc;
};

/** The user's rows (of one provider), by collection; deletion jobs are records of the erasures themselves and stay. */
const rowsOf = (all: Map<string, Doc[]>, userId: string, provider?: string) =>
  Object.fromEntries(
    [...all]
      .filter(([c]) => c !== 'deletion_jobs')
      .map(([c, docs]) => [c, docs.filter((d) => d.user_id === userId && (provider === undefined || d.provider === provider)).map(normalised)]),
  );

/** Collections that hold anything at all of `userId` (their id anywhere in a document). */
const mentioning = (all: Map<string, Doc[]>, userId: string) => [...all].filter(([, docs]) => docs.some((d) => JSON.stringify(d).includes(userId))).map(([c]) => c);

async function rebuildEverything(): Promise<Map<string, Doc[]>> {
  await t.close();
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_API_KEY, LOG_LEVEL: 'silent' } as NodeJS.ProcessEnv);
  const ctx = await createContext(config, { log: createLogger('silent'), runBackground: false });
  try {
    await ctx.projectors.rebuild(undefined);
    return await everything(ctx.readStore);
  } finally {
    await ctx.close();
    t = await startTestApp({ DATA_DIR: dataDir, ADMIN_API_KEY });
  }
}

beforeAll(async () => {
  t = await startTestApp({ DATA_DIR: dataDir, ADMIN_API_KEY });
  tenant = await t.createTenant('rebuild');
  x = (await t.createUser(tenant.apiKey)).id;
  y = (await t.createUser(tenant.apiKey)).id;
  for (const u of [x, y]) {
    await uploadMarked(t, tenant.apiKey, u, 'device-a', fixtureA());
    await uploadMarked(t, tenant.apiKey, u, 'device-b', fixtureB());
  }
}, 120_000);
afterAll(async () => t?.close());

describe('rebuilding every projection after an erasure brings nothing back (issue acceptance; spec Provider erasure, States: User)', () => {
  it('erases one of two providers of a user: after a rebuild of every projection its rows are absent, the other provider’s records and the other user are intact', { timeout: 120_000 }, async () => {
    const before = await everything(t.ctx.readStore);
    for (const [c, docs] of Object.entries(rowsOf(before, x, 'device-a')).filter(([c]) => ['samples', 'sleep_sessions', 'workouts', 'etl_jobs'].includes(c))) {
      expect(docs.length, c).toBeGreaterThan(0);
    }
    const res = await t.call('DELETE', `/v1/users/${x}/data/device-a`, { key: tenant.apiKey });
    expect(res.statusCode, res.body).toBe(202);
    expect(await t.waitForDeletion(tenant.apiKey, (res.json() as { job_id: string }).job_id)).toMatchObject({ status: 'done' });
    await t.ctx.settle();
    const live = await everything(t.ctx.readStore);

    const rebuilt = await rebuildEverything();
    for (const [name, state] of [['live', live], ['rebuilt', rebuilt]] as const) {
      for (const [c, docs] of Object.entries(rowsOf(state, x, 'device-a'))) expect(docs, `${name} ${c}`).toEqual([]);
      // The other provider's records are all there (derived fields may change: a hidden record can show again).
      for (const [c, docs] of Object.entries(rowsOf(state, x, 'device-b'))) {
        expect(docs.map((d) => d._id).sort(), `${name} ${c}`).toEqual(rowsOf(before, x, 'device-b')[c]!.map((d) => d._id).sort());
      }
      expect(rowsOf(state, y), name).toEqual(rowsOf(before, y));
    }
    // The rebuild equals what the live projections hold.
    expect(rowsOf(rebuilt, x)).toEqual(rowsOf(live, x));
    // The user, their order of sources and their other provider still answer.
    expect((await t.call('GET', `/v1/users/${x}`, { key: tenant.apiKey })).statusCode).toBe(200);
    const samples = await t.call('GET', `/v1/users/${x}/samples`, { key: tenant.apiKey, query: { type: 'heart_rate', view: 'all', limit: '1000' } });
    const providers = new Set((samples.json() as { data: { provider: string }[] }).data.map((s) => s.provider));
    expect([...providers]).toEqual(['device-b']);
  });

  it('deletes one of two users: after a rebuild of every projection nothing of theirs is in any read model but their deletion job (and audit entries naming them), the other user is intact', { timeout: 120_000 }, async () => {
    const before = await everything(t.ctx.readStore);
    expect(mentioning(before, y).length).toBeGreaterThan(5);
    const job = await t.waitForDeletion(tenant.apiKey, await t.deleteUser(tenant.apiKey, y));
    expect(job.status).toBe('done');
    await t.ctx.settle();
    const live = await everything(t.ctx.readStore);

    const rebuilt = await rebuildEverything();
    for (const state of [live, rebuilt]) {
      expect(mentioning(state, y).sort()).toEqual(['audit_log', 'deletion_jobs']);
      expect(rowsOf(state, x)).toEqual(rowsOf(before, x));
    }
    expect((await t.call('GET', `/v1/users/${y}`, { key: tenant.apiKey })).statusCode).toBe(404);
    expect((await t.call('GET', `/v1/deletions/${String(job.job_id)}`, { key: tenant.apiKey })).json()).toMatchObject({ status: 'done', user_id: y });
  });
});
