import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_A_NDJSON } from '../ingest/uploadHelpers.js';
import { chromiumAvailable, chromiumMissing, openPage } from '../support/chromium.js';
import { expectStatus } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';
import { connectOura, demoUser, shot, signIn as signInAt, startConsoleService, uploadUser, type ConsoleService } from './consoleService.js';

/**
 * The operator console (issue "Operator console", docs/console.md) in a real headless Chromium
 * against one running service: sign in, open users, and check that every number a chart or table
 * holds is the number the API answers for the same query. `CONSOLE_SCREENSHOTS=<dir>` also writes
 * the screenshots docs/console.md shows. charts.e2e.test.ts and pages.e2e.test.ts hold the rules
 * of issue 23 (charts that do not mislead, every page at phone width).
 */
type Bucket = { start: string; provider: string; source: string; count: number; sum: number; avg: number };
type Stats = { buckets: Bucket[] };
type Coverage = { pending_jobs: number; parked_jobs: number; rejected_records: number; days: { provider: string; date: string; records: number }[] };

if (!chromiumAvailable) {
  it.skip(`console end-to-end: ${chromiumMissing}`, () => {});
} else {
  let s: ConsoleService;
  let demoUserId: string;
  let uploadUserId: string;
  const api = <T,>(path: string, query: Record<string, string> = {}, key?: string) => s.api<T>(path, query, key);
  const seriesKey = (b: Bucket) => (b.source && b.source !== b.provider ? `${b.provider} · ${b.source}` : b.provider);
  const signIn = (page: Page, key: string) => signInAt(page, s.base, key);

  beforeAll(async () => {
    s = await startConsoleService({ oura: true });
    demoUserId = await demoUser(s);
    // A HealthKit upload with a workout route, plus one line the ETL must reject; the same user connects Oura through the sandbox.
    uploadUserId = await uploadUser(s, 'runner-with-route', `${FIXTURE_A_NDJSON.trimEnd()}\n{"kind":"quantity","this line":"is not a record"}\n`);
    await connectOura(s, uploadUserId);
  });
  afterAll(async () => {
    await s?.close();
  });

  describe('console', () => {
    it('refuses a wrong key with a message, signs in with the tenant key and finds users by external_ref', async () => {
      const { page, errors } = await openPage(s.browser);
      await page.goto(`${s.base}/console/`);
      await shot(page, 'sign-in');
      await page.getByLabel('API key').fill('svc_sk_' + 'x'.repeat(43));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown, revoked or expired/);
      await page.getByLabel('API key').fill(s.tenant.apiKey);
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
      const { page, errors } = await openPage(s.browser);
      // A link into the console (as the demo start prints) opens its page once signed in.
      await page.goto(`${s.base}/console/#/users/${demoUserId}`);
      await page.getByLabel('API key').fill(s.tenant.apiKey);
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
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${uploadUserId}`);
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

      await page.goto(`${s.base}/console/#/pipeline/${uploadUserId}`);
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
      // A manual pull from the page is the API's: a queued manual run (nothing runs it here).
      await page.getByRole('button', { name: 'Pull now: oura' }).click();
      const queued = Number(/queued as run (\d+)/.exec((await page.getByText(/^Pull of oura queued as run/).textContent())!)![1]);
      const after = await api<{ data: { id: number; trigger: string; status: string }[] }>(`/v1/users/${uploadUserId}/sync-runs`);
      expect(after.data.find((r) => r.id === queued)).toMatchObject({ trigger: 'manual', status: 'queued' });
      await page.waitForSelector(`[data-testid=sync-runs-table] tr[data-run-id="${queued}"]`);
      expect(errors).toEqual([]);
    });

    it('source order: a change saved through the page is the PUT the API keeps, and the tenant audit log lists it', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/sources/${demoUserId}`);
      await page.getByLabel('Order for').selectOption('heart_rate');
      await page.getByRole('button', { name: 'Add metric or group' }).click();
      await page.getByLabel('Add a source to heart_rate').fill('oura');
      await page.getByLabel('Add a source to heart_rate').press('Enter');
      await page.getByLabel('Add a source to heart_rate').fill('apple');
      await page.getByLabel('Add a source to heart_rate').press('Enter');
      // Before saving, the preview shows what this order would show, as the preview route answers it.
      const day = await page.getByLabel('Day (UTC)').inputValue();
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      const res = await s.t.call('POST', `/v1/users/${demoUserId}/source-priorities/preview`, { key: s.tenant.apiKey, body: { priorities: { heart_rate: ['oura', 'apple'] }, type: 'heart_rate', start: day, end: next } });
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

      // The tenant's own audit log holds those changes (applied to its read model in the background:
      // the page opens once the last one is there), as the audit route lists them.
      const audit = await eventually(async () => {
        const log = await api<{ data: { id: string; action: string }[] }>('/v1/audit-log', { limit: '50' });
        return log.data.some((e) => e.action === 'user.source_priorities_set') && log;
      });
      await page.goto(`${s.base}/console/#/audit`);
      await page.waitForSelector('[data-testid=audit-table] tr[data-audit-id]');
      expect(await page.$$eval('[data-testid=audit-table] tr[data-audit-id]', (trs) => trs.map((tr) => tr.getAttribute('data-audit-id')))).toEqual(audit.data.map((e) => e.id));
      expect(errors).toEqual([]);
    });

    it('admin: tenants, keys issued and revoked through the page as the API lists them, and the audit log', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.t.adminKey);
      await page.goto(`${s.base}/console/#/admin/${s.tenant.id}`);
      await page.waitForSelector(`[data-testid=tenants-table] tr[data-tenant-id="${s.tenant.id}"]`);
      await page.waitForSelector('[data-testid=keys-table] tbody tr');
      const before = await api<{ data: { id: string }[] }>(`/v1/admin/tenants/${s.tenant.id}/api-keys`, {}, s.t.adminKey);
      await page.getByRole('button', { name: 'Issue a key' }).click();
      await page.getByText(/^Key .* issued\.$/).waitFor();
      const issued = await page.getByLabel('New API key').inputValue();
      expect(issued).toMatch(/^svc_sk_[A-Za-z0-9]{43}$/);
      const after = await api<{ data: { id: string; revoked_at: string | null }[] }>(`/v1/admin/tenants/${s.tenant.id}/api-keys`, {}, s.t.adminKey);
      expect(after.data).toHaveLength(before.data.length + 1);
      const fresh = after.data.find((k) => !before.data.some((b) => b.id === k.id))!;
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: `Revoke key ${fresh.id}` }).click();
      await page.getByText(`Key ${fresh.id} revoked.`).waitFor();
      const revoked = await api<{ data: { id: string; revoked_at: string | null }[] }>(`/v1/admin/tenants/${s.tenant.id}/api-keys`, {}, s.t.adminKey);
      expect(revoked.data.find((k) => k.id === fresh.id)!.revoked_at).not.toBeNull();
      expectStatus(await s.t.call('GET', '/v1/users', { key: issued }), 401);
      await page.waitForSelector('[data-testid=audit-table] tbody tr');
      await shot(page, 'admin');
      expect(errors).toEqual([]);
    });

    it('is usable by keyboard with labelled controls, and fits a phone-width screen (every page: pages.e2e.test.ts)', async () => {
      const { page, errors } = await openPage(s.browser, { width: 390, height: 844 });
      await page.goto(`${s.base}/console/`);
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.id')).toBe('key');
      await page.keyboard.type(s.tenant.apiKey);
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await page.getByRole('navigation', { name: 'Sections' }).waitFor();
      await page.goto(`${s.base}/console/#/users/${demoUserId}`);
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
      expect(errors).toEqual([]);
    });
  });
}
