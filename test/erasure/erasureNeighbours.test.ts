import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { deviceAForm, postUpload, waitForEtl } from '../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../support/server.js';

/**
 * contracts §19, "Erasure never stalls the others": while one tenant runs deletions and provider
 * erasures back to back, another tenant's writes go on and none fails, and the erasures leave the
 * files scrubbed (no copy half made, nothing still due). How long the neighbour's writes wait is
 * measured by `npm run bench -- erasure-rewrite` (BENCHMARKS.md), not asserted here; that the
 * scrub gives the write lock back between its chunks is test/shared/sqliteScrub.test.ts.
 */
let t: TestApp | undefined;
afterAll(async () => {
  await t?.close();
});

/** `n` heart-rate lines of device-a (HealthKit export lines), one a minute from minute `from`. */
function heartRates(n: number, from = 0): Buffer {
  const start = Date.parse('2026-11-01T00:00:00Z') + from * 60_000;
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const at = new Date(start + i * 60_000).toISOString();
    lines.push(JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', value: 50 + (i % 90), unit: 'count/min', start_date: at, end_date: at, source_name: 'Watch' }));
  }
  return gzipSync(lines.join('\n'));
}

const scrubState = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return {
      leftovers: db.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '\\_scrub\\_new\\_%' ESCAPE '\\' OR name LIKE '\\_scrub\\_old\\_%' ESCAPE '\\' OR name LIKE '\\_scrub\\_t%' ESCAPE '\\'").pluck().all(),
      due: db.prepare('SELECT tbl FROM _scrub_due').pluck().all(),
    };
  } finally {
    db.close();
  }
};

describe('erasure without collateral for other tenants (contracts §19)', () => {
  it('while tenant A runs 10 deletions and 10 provider erasures back to back, tenant B’s uploads are all accepted and readable, and the files end scrubbed', { timeout: 240_000 }, async () => {
    t = await startTestApp();
    const a = await t.createTenant('erasing');
    const b = await t.createTenant('neighbour');
    const usersOfA: string[] = [];
    for (let i = 0; i < 20; i++) {
      const user = await t.createUser(a.apiKey);
      const { token } = await t.mintToken(a.apiKey, user.id, { scopes: ['upload'] });
      expectStatus(await postUpload(t, 'device-a', token, `a-${i}`, deviceAForm(heartRates(1_000))), 202);
      usersOfA.push(user.id);
    }
    for (const userId of usersOfA) await waitForEtl(t, a.apiKey, userId);
    const neighbour = await t.createUser(b.apiKey);
    const { token: tokenB } = await t.mintToken(b.apiKey, neighbour.id, { scopes: ['upload'] });

    const jobs: string[] = [];
    for (const userId of usersOfA.slice(0, 10)) jobs.push(await t.deleteUser(a.apiKey, userId));
    for (const userId of usersOfA.slice(10)) {
      const res = await t.call('DELETE', `/v1/users/${userId}/data/device-a`, { key: a.apiKey });
      expectStatus(res, 202);
      jobs.push((res.json() as { job_id: string }).job_id);
    }

    let erasing = true;
    const outcomes: number[] = [];
    const writes = (async () => {
      for (let n = 0; erasing; n++) {
        const res = await postUpload(t!, 'device-a', tokenB, `b-${n}`, deviceAForm(heartRates(1, n)));
        outcomes.push(res.statusCode);
      }
    })();
    const ended = await Promise.all(jobs.map((job) => t!.waitForDeletion(a.apiKey, job, 200_000)));
    erasing = false;
    await writes;

    expect(ended.map((j) => j.status)).toEqual(jobs.map(() => 'done'));
    // B wrote all along, and no write of B failed or was refused.
    expect(outcomes.length).toBeGreaterThan(5);
    expect(outcomes.filter((s) => s !== 202)).toEqual([]);
    await waitForEtl(t, b.apiKey, neighbour.id);
    const samples = await t.call('GET', `/v1/users/${neighbour.id}/samples?type=heart_rate&view=all&limit=1000`, { key: b.apiKey });
    expectStatus(samples, 200);
    expect((samples.json() as { data: unknown[] }).data).toHaveLength(outcomes.length);

    for (const file of ['readmodels.sqlite', 'events.sqlite'].map((f) => join(t!.dataDir, f)).filter(existsSync)) {
      expect(scrubState(file), file).toEqual({ leftovers: [], due: [] });
    }
  });
});
