import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleAssetsDir } from '../../src/server/routes/console.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { connectThroughSandbox } from '../connections/consentFlow.js';
import { eventually } from '../webhooks/receiver.js';
import { FIXTURE_A_NDJSON, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { chromiumAvailable, chromiumMissing, launchChromium, openPage } from '../support/chromium.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { gzipSync } from 'node:zlib';

/**
 * The operator console (issue "Operator console", docs/console.md) in a real headless Chromium
 * against one running service: sign in, open users, and check that every number a chart or table
 * holds is the number the API answers for the same query. `CONSOLE_SCREENSHOTS=<dir>` also writes
 * the screenshots docs/console.md shows.
 */
type Bucket = { start: string; provider: string; source: string; count: number; sum: number; avg: number };
type Stats = { buckets: Bucket[] };
type Coverage = { pending_jobs: number; parked_jobs: number; rejected_records: number; days: { provider: string; date: string; records: number }[] };

const SHOTS = process.env.CONSOLE_SCREENSHOTS;

if (!chromiumAvailable) {
  it.skip(`console end-to-end: ${chromiumMissing}`, () => {});
} else {
  let t: TestApp;
  let sandbox: Sandbox;
  let tenant: TenantHandle;
  let base: string;
  let browser: Browser;
  let demoUserId: string;
  let uploadUserId: string;

  const api = async <T,>(path: string, query: Record<string, string> = {}, key = tenant.apiKey): Promise<T> => {
    const res = await t.call('GET', path, { key, query });
    expectStatus(res, 200);
    return res.json() as T;
  };
  const seriesKey = (b: Bucket) => (b.source && b.source !== b.provider ? `${b.provider} · ${b.source}` : b.provider);
  const shot = async (page: Page, name: string) => {
    if (!SHOTS) return;
    mkdirSync(SHOTS, { recursive: true });
    // Keys shown once are masked: a screenshot is no place for a secret, even a test instance's.
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true, mask: [page.locator('.once input')] });
  };
  const signIn = async (page: Page, key: string) => {
    await page.goto(`${base}/console/`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
  };

  beforeAll(async () => {
    // A clean clone has built assets after `npm ci` (prepare); a checkout that skipped it builds here.
    if (!consoleAssetsDir()) execFileSync('npm', ['run', '-s', 'build:console'], { stdio: 'inherit' });
    sandbox = await startSandbox();
    // Pulls run when the test says (syncPolling off), so the sync runs the page shows stand still.
    t = await startTestApp(
      { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret },
      { syncPolling: false },
    );
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    tenant = await t.createTenant('console');
    const demo = await t.call('POST', `/v1/admin/tenants/${tenant.id}/demo-user`, { key: t.adminKey, body: { persona: 'mix', days: 7 } });
    expectStatus(demo, 200);
    demoUserId = (demo.json() as { user: { id: string } }).user.id;
    // A HealthKit upload with a workout route, plus one line the ETL must reject.
    const uploader = await t.createUser(tenant.apiKey, { external_ref: 'runner-with-route' });
    uploadUserId = uploader.id;
    const token = await t.mintToken(tenant.apiKey, uploader.id, { scopes: ['upload'] });
    const payload = gzipSync(`${FIXTURE_A_NDJSON.trimEnd()}\n{"kind":"quantity","this line":"is not a record"}\n`);
    expectStatus(await postUpload(t, 'device-a', token.token, 'console-e2e', requestFor('device-a', payload)), 202);
    // The same user connects Oura through the sandbox: its backfill pull runs to the end.
    expectStatus((await connectThroughSandbox(t, tenant.apiKey, uploader.id, 'oura')).callback, 200);
    // The connection's reactor queues the backfill on its own time: wait for it, then run it out.
    await eventually(async () => {
      await t.ctx.settle();
      return (await api<{ data: unknown[] }>(`/v1/users/${uploader.id}/sync-runs`)).data.length > 0;
    });
    for (let pass = 0; pass < 20 && (await t.ctx.sync.runDue()).length > 0; pass++) await t.ctx.settle();
    await t.ctx.settle();
    await waitForEtl(t, tenant.apiKey, demoUserId);
    await waitForEtl(t, tenant.apiKey, uploader.id);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await sandbox?.close();
  });

  describe('console', () => {
    it('refuses a wrong key with a message, signs in with the tenant key and finds users by external_ref', async () => {
      const { page, errors } = await openPage(browser);
      await page.goto(`${base}/console/`);
      await shot(page, 'sign-in');
      await page.getByLabel('API key').fill('svc_sk_' + 'x'.repeat(43));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown, revoked or expired/);
      await page.getByLabel('API key').fill(tenant.apiKey);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      await page.waitForSelector('[data-testid=users-table] tbody tr');
      const listed = await page.$$eval('[data-testid=users-table] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-user-id')));
      const users = await api<{ data: { id: string }[] }>('/v1/users', { limit: '1000' });
      expect(listed.sort()).toEqual(users.data.map((u) => u.id).sort());
      await page.getByLabel('Search by external_ref').fill('route');
      await expect.poll(() => page.$$eval('[data-testid=users-table] tbody tr', (rows) => rows.map((r) => r.getAttribute('data-user-id')))).toEqual([uploadUserId]);
      await shot(page, 'users');
      // The key is in the page's memory only.
      const stored = await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]');
      expect(stored).toEqual([0, 0, '']);
      // The one failed request is the refused sign-in.
      expect(errors).toEqual(['401 GET /v1/users']);
    });

    it('a demo user: heatmap, statistics (merged against every source, both time zones), hypnogram and health badges hold what the API answers', async () => {
      const { page, errors } = await openPage(browser);
      // A link into the console (as the demo start prints) opens its page once signed in.
      await page.goto(`${base}/console/#/users/${demoUserId}`);
      await page.getByLabel('API key').fill(tenant.apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'demo-user' }).waitFor();
      // The demo user has 7 days; a 14-day window shows them with a few empty days around.
      const thirty = await page.getByLabel('From', { exact: true }).inputValue();
      await page.getByRole('button', { name: '14 days' }).click();
      await expect.poll(() => page.getByLabel('From', { exact: true }).inputValue()).not.toBe(thirty);
      const start = await page.getByLabel('From', { exact: true }).inputValue();
      const end = await page.getByLabel('To (excluded)', { exact: true }).inputValue();
      const prefix = `/v1/users/${demoUserId}`;

      await page.waitForSelector('[data-testid=coverage-heatmap] td[data-records]', { state: 'attached' });
      const coverage = await api<Coverage>(`${prefix}/coverage`, { start, end });
      const cells = await page.$$eval('[data-testid=coverage-heatmap] td[data-records]', (tds) => tds.map((td) => [td.getAttribute('data-provider'), td.getAttribute('data-date'), Number(td.getAttribute('data-records'))] as const));
      expect(coverage.days.length).toBeGreaterThan(0);
      for (const d of coverage.days) expect(cells).toContainEqual([d.provider, d.date, d.records]);
      expect(cells.filter(([, , n]) => n > 0)).toHaveLength(coverage.days.filter((d) => d.records > 0).length);
      for (const f of ['pending_jobs', 'parked_jobs', 'rejected_records'] as const) {
        expect(Number(await page.locator(`[data-testid=coverage-counts] [data-field=${f}]`).textContent())).toBe(coverage[f]);
      }

      const checkStats = async (tz: string, interval: 'day' | 'hour') => {
        await page.waitForSelector(`[data-testid=metric-chart][data-tz="${tz}"][data-interval="${interval}"] [data-testid=stats-table] tbody tr`, { state: 'attached' });
        const q = { type: 'heart_rate', start, end, interval, tz };
        const merged = await api<Stats>(`${prefix}/samples/stats`, { ...q, view: 'merged' });
        const all = await api<Stats>(`${prefix}/samples/stats`, { ...q, view: 'all' });
        const rows = await page.$$eval('[data-testid=stats-table] tbody tr', (trs) =>
          trs.map((tr) => ({
            start: tr.getAttribute('data-start'),
            winner: tr.querySelector('[data-field=winner]')!.textContent,
            merged: tr.querySelector('[data-field=merged]')!.getAttribute('data-value'),
            sources: Object.fromEntries([...tr.querySelectorAll('[data-source]')].map((td) => [td.getAttribute('data-source'), [td.getAttribute('data-value'), td.getAttribute('data-count')]])),
          })),
        );
        expect(new Set(all.buckets.map(seriesKey)).size).toBeGreaterThan(1); // the mix persona has two sources
        expect(rows.map((r) => r.start)).toEqual([...new Set(all.buckets.map((b) => b.start))]);
        for (const b of merged.buckets) {
          const row = rows.find((r) => r.start === b.start)!;
          expect(row.winner).toContain(seriesKey(b));
          // One merged row: its avg as answered; a winner change inside the bucket: the rows' count-weighted mean.
          const rowsOfBucket = merged.buckets.filter((m) => m.start === b.start);
          if (rowsOfBucket.length === 1) expect(Number(row.merged)).toBe(b.avg);
          else expect(Number(row.merged)).toBeCloseTo(rowsOfBucket.reduce((s, m) => s + m.sum, 0) / rowsOfBucket.reduce((s, m) => s + m.count, 0), 9);
        }
        for (const b of all.buckets) expect(rows.find((r) => r.start === b.start)!.sources[seriesKey(b)]).toEqual([String(b.avg), String(b.count)]);
      };
      await checkStats('UTC', 'day');
      await shot(page, 'user');
      await page.getByLabel('Time zone', { exact: true }).selectOption('Asia/Tokyo');
      await checkStats('Asia/Tokyo', 'day');
      await page.getByLabel('Interval', { exact: true }).selectOption('hour');
      await checkStats('Asia/Tokyo', 'hour');

      await page.waitForSelector('[data-testid=hypnogram]');
      const sessionId = await page.locator('[data-testid=sleep-summary]').getAttribute('data-session-id');
      const phases = await api<{ data: { id: number; phase: string; duration_s: number }[] }>(`${prefix}/sleep/${sessionId}/phases`, { limit: '1000' });
      expect(phases.data.length).toBeGreaterThan(0);
      expect(await page.$$eval('[data-testid=hypnogram] rect[data-phase]', (rects) => rects.map((r) => r.getAttribute('data-phase')))).toEqual(phases.data.map((p) => p.phase));
      expect(await page.$$eval('[data-testid=phases-table] [data-field=duration_s]', (tds) => tds.map((td) => Number(td.textContent)))).toEqual(phases.data.map((p) => p.duration_s));

      const freshness = await api<{ data: { provider: string; state: string; lag_seconds: number | null }[] }>(`${prefix}/freshness`);
      for (const f of freshness.data) {
        const row = page.locator(`[data-testid=health-table] tr[data-provider="${f.provider}"]`);
        expect(await row.locator('[data-field=state]').textContent()).toBe(f.state.replace(/_/g, ' '));
      }
      expect(errors).toEqual([]);
    });

    it('an uploaded workout shows its route as a polyline of every route point; the pipeline page lists the rejected line and the sync-runs state', async () => {
      const { page, errors } = await openPage(browser);
      await signIn(page, tenant.apiKey);
      await page.goto(`${base}/console/#/users/${uploadUserId}`);
      // The fixture's records are from 2026-11-01: the window is set by hand.
      await page.getByLabel('From', { exact: true }).fill('2026-10-28');
      await page.getByLabel('To (excluded)', { exact: true }).fill('2026-11-04');
      // The uploaded run has a route (Oura's workouts from the sandbox have none): choose it in the table.
      const workouts = await api<{ data: { id: number; provider: string }[] }>(`/v1/users/${uploadUserId}/workouts`, { start: '2026-10-28', end: '2026-11-04' });
      const run = workouts.data.find((w) => w.provider === 'device-a')!;
      await page.locator(`[data-testid=workouts-table] tr[data-workout-id="${run.id}"] button`).click();
      await page.waitForSelector('[data-testid=route]');
      const points = await api<{ data: unknown[] }>(`/v1/users/${uploadUserId}/workouts/${run.id}/route`, { limit: '1000' });
      expect(points.data.length).toBeGreaterThan(1);
      expect(Number(await page.locator('[data-testid=route]').getAttribute('data-points'))).toBe(points.data.length);
      const drawn = await page.locator('[data-testid=route] polyline').getAttribute('points');
      expect(drawn!.trim().split(/\s+/)).toHaveLength(points.data.length);
      // The Oura connection's health as the connections route answers it.
      const oura = (await api<{ data: { provider: string; status: string; health: { healthy: boolean } }[] }>(`/v1/users/${uploadUserId}/connections`)).data.find((c) => c.provider === 'oura')!;
      const cell = await page.locator('[data-testid=health-table] tr[data-provider=oura] [data-field=connection]').textContent();
      expect(cell).toContain(oura.status);
      expect(cell).toContain(oura.health.healthy ? 'healthy' : '');
      await shot(page, 'user-workout');

      await page.goto(`${base}/console/#/pipeline/${uploadUserId}`);
      const rejected = await api<{ data: { reason: string }[] }>(`/v1/users/${uploadUserId}/rejected-records`);
      expect(rejected.data.length).toBeGreaterThan(0);
      await page.waitForSelector('[data-testid=rejected-table] tbody tr');
      expect(await page.locator('[data-testid=rejected-table] tbody tr').count()).toBe(rejected.data.length);
      // Sync runs per connection: the backfill the Oura connection made, as the API lists it.
      const runs = await api<{ data: { id: number; provider: string; status: string; objects_stored: number | null }[] }>(`/v1/users/${uploadUserId}/sync-runs`);
      expect(runs.data.length).toBeGreaterThan(0);
      await page.waitForSelector('[data-testid=sync-runs-table][data-provider=oura] tr[data-run-id]');
      const rows = await page.$$eval('[data-testid=sync-runs-table] tr[data-run-id]', (trs) =>
        trs.map((tr) => ({ id: Number(tr.getAttribute('data-run-id')), status: tr.querySelector('[data-field=status]')!.textContent, stored: tr.querySelector('[data-field=objects_stored]')!.textContent })),
      );
      expect(rows).toEqual(runs.data.map((r) => ({ id: r.id, status: r.status.replace(/_/g, ' '), stored: r.objects_stored === null ? '—' : String(r.objects_stored) })));
      await shot(page, 'pipeline');
      // A manual pull from the page is the API's: a queued manual run (nothing runs it here).
      await page.getByRole('button', { name: 'Pull now: oura' }).click();
      const queued = Number(/queued as run (\d+)/.exec((await page.getByText(/^Pull of oura queued as run/).textContent())!)![1]);
      const after = await api<{ data: { id: number; trigger: string; status: string }[] }>(`/v1/users/${uploadUserId}/sync-runs`);
      expect(after.data.find((r) => r.id === queued)).toMatchObject({ trigger: 'manual', status: 'queued' });
      await page.waitForSelector(`[data-testid=sync-runs-table] tr[data-run-id="${queued}"]`);
      expect(errors).toEqual([]);
    });

    it('source order: a change saved through the page is the PUT the API keeps; webhooks list endpoints with health and deliveries', async () => {
      const { page, errors } = await openPage(browser);
      await signIn(page, tenant.apiKey);
      await page.goto(`${base}/console/#/sources/${demoUserId}`);
      await page.getByLabel('Order for').selectOption('heart_rate');
      await page.getByRole('button', { name: 'Add metric or group' }).click();
      await page.getByLabel('Add a source to heart_rate').fill('oura');
      await page.getByLabel('Add a source to heart_rate').press('Enter');
      await page.getByLabel('Add a source to heart_rate').fill('apple');
      await page.getByLabel('Add a source to heart_rate').press('Enter');
      // Before saving, the preview shows what this order would show, as the preview route answers it.
      const day = await page.getByLabel('Day (UTC)').inputValue();
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      const res = await t.call('POST', `/v1/users/${demoUserId}/source-priorities/preview`, { key: tenant.apiKey, body: { priorities: { heart_rate: ['oura', 'apple'] }, type: 'heart_rate', start: day, end: next } });
      expectStatus(res, 200);
      const previewed = (res.json() as { records: { source: string; shown: boolean; shown_now: boolean }[] }).records;
      const count = (source: string, field: 'shown' | 'shown_now') => String(previewed.filter((r) => r.source === source && r[field]).length);
      for (const source of ['apple', 'oura']) {
        const row = page.locator(`[data-testid=preview-summary] tr[data-source=${source}]`);
        await expect.poll(() => row.locator('[data-field=shown]').textContent()).toBe(count(source, 'shown'));
        expect(await row.locator('[data-field=shown_now]').textContent()).toBe(count(source, 'shown_now'));
      }
      expect(count('oura', 'shown')).not.toBe(count('oura', 'shown_now'));
      await page.getByRole('button', { name: 'Save order (PUT)' }).click();
      await page.getByText(/^Saved at/).waitFor();
      const saved = await api<{ priorities: Record<string, string[]> }>(`/v1/users/${demoUserId}/source-priorities`);
      expect(saved.priorities).toEqual({ heart_rate: ['oura', 'apple'] });
      await page.waitForSelector('[data-testid=preview-summary] tbody tr');
      await shot(page, 'sources');

      const hook = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: 'http://127.0.0.1:9/hook', description: 'nobody listens here' } });
      expectStatus(hook, 201);
      const hookId = (hook.json() as { id: string }).id;
      await page.goto(`${base}/console/#/webhooks/${hookId}`);
      await page.waitForSelector(`[data-testid=webhooks-table] tr[data-webhook-id="${hookId}"]`);
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.waitForSelector('[data-testid=deliveries] li[data-delivery-id]');
      const deliveries = await api<{ data: { id: number; attempts: number }[] }>(`/v1/webhooks/${hookId}/deliveries`);
      const shown = await page.$$eval('[data-testid=deliveries] li[data-delivery-id]', (lis) => lis.map((li) => Number(li.getAttribute('data-delivery-id'))));
      expect(shown).toEqual(deliveries.data.map((d) => d.id).slice(0, shown.length));
      // One click replays a delivery: a new delivery of the same event, replay_of naming the first.
      const original = shown[shown.length - 1]!;
      await page.getByRole('button', { name: `Replay delivery ${original}` }).click();
      const replayed = Number(/Replayed as delivery (\d+)\./.exec((await page.getByText(/^Replayed as delivery/).textContent())!)![1]);
      const replay = await api<{ replay_of: number | null; event_id: string }>(`/v1/webhooks/${hookId}/deliveries/${replayed}`);
      const first = await api<{ event_id: string }>(`/v1/webhooks/${hookId}/deliveries/${original}`);
      expect(replay.replay_of).toBe(original);
      expect(replay.event_id).toBe(first.event_id);
      await page.waitForSelector(`[data-testid=deliveries] li[data-delivery-id="${replayed}"]`);
      await shot(page, 'webhooks');

      // The tenant's own audit log holds those changes (applied to its read model in the background:
      // the page opens once the last one is there), as the audit route lists them.
      const audit = await eventually(async () => {
        const log = await api<{ data: { id: string; action: string }[] }>('/v1/audit-log', { limit: '50' });
        return log.data.some((e) => e.action === 'webhook.replay') && log;
      });
      expect(audit.data.map((e) => e.action)).toEqual(expect.arrayContaining(['user.source_priorities_set', 'webhook.test', 'webhook.replay']));
      await page.goto(`${base}/console/#/audit`);
      await page.waitForSelector('[data-testid=audit-table] tr[data-audit-id]');
      expect(await page.$$eval('[data-testid=audit-table] tr[data-audit-id]', (trs) => trs.map((tr) => tr.getAttribute('data-audit-id')))).toEqual(audit.data.map((e) => e.id));
      expect(errors).toEqual([]);
    });

    it('admin: tenants, keys issued and revoked through the page as the API lists them, and the audit log', async () => {
      const { page, errors } = await openPage(browser);
      await signIn(page, t.adminKey);
      await page.goto(`${base}/console/#/admin/${tenant.id}`);
      await page.waitForSelector(`[data-testid=tenants-table] tr[data-tenant-id="${tenant.id}"]`);
      await page.waitForSelector('[data-testid=keys-table] tbody tr');
      const before = await api<{ data: { id: string }[] }>(`/v1/admin/tenants/${tenant.id}/api-keys`, {}, t.adminKey);
      await page.getByRole('button', { name: 'Issue a key' }).click();
      await page.getByText(/^Key .* issued\.$/).waitFor();
      const issued = await page.getByLabel('New API key').inputValue();
      expect(issued).toMatch(/^svc_sk_[A-Za-z0-9]{43}$/);
      const after = await api<{ data: { id: string; revoked_at: string | null }[] }>(`/v1/admin/tenants/${tenant.id}/api-keys`, {}, t.adminKey);
      expect(after.data).toHaveLength(before.data.length + 1);
      const fresh = after.data.find((k) => !before.data.some((b) => b.id === k.id))!;
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: `Revoke key ${fresh.id}` }).click();
      await page.getByText(`Key ${fresh.id} revoked.`).waitFor();
      const revoked = await api<{ data: { id: string; revoked_at: string | null }[] }>(`/v1/admin/tenants/${tenant.id}/api-keys`, {}, t.adminKey);
      expect(revoked.data.find((k) => k.id === fresh.id)!.revoked_at).not.toBeNull();
      expectStatus(await t.call('GET', '/v1/users', { key: issued }), 401);
      await page.waitForSelector('[data-testid=audit-table] tbody tr');
      await shot(page, 'admin');
      expect(errors).toEqual([]);
    });

    it('is usable by keyboard with labelled controls, and fits a phone-width screen', async () => {
      const { page, errors } = await openPage(browser, { width: 390, height: 844 });
      await page.goto(`${base}/console/`);
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.id')).toBe('key');
      await page.keyboard.type(tenant.apiKey);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
      await page.goto(`${base}/console/#/users/${demoUserId}`);
      await page.waitForSelector('[data-testid=hypnogram]');
      await page.waitForSelector('[data-testid=stats-table]', { state: 'attached' });
      const unlabelled = await page.$$eval('input, select, button', (els) =>
        els.filter((el) => {
          const e = el as typeof el & { labels?: ArrayLike<unknown> | null };
          return !(e.labels?.length || e.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent?.trim()));
        }).map((el) => el.outerHTML.slice(0, 80)),
      );
      expect(unlabelled).toEqual([]);
      // The page itself does not scroll sideways; wide tables scroll inside their own box.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await shot(page, 'user-phone');
      expect(errors).toEqual([]);
    });
  });
}
