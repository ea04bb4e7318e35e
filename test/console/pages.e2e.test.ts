import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_A_NDJSON } from '../ingest/uploadHelpers.js';
import { chromiumAvailable, chromiumMissing, openPage } from '../support/chromium.js';
import { expectStatus } from '../support/server.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { connectOura, demoUser, settled, shot, signIn, startConsoleService, uploadUser, type ConsoleService } from './consoleService.js';

/**
 * Issue 23, console: pages a new operator can work with, in headless Chromium against a running
 * service. The user just viewed is carried across pages; webhook endpoints are created, edited and
 * deleted with the secret shown once; Replay only for final deliveries; sync-run attempts counted
 * right; rejected records in line order; no page scrolls sideways at 390 px and long tables fold.
 */
type Webhook = { id: string; url: string; description: string; event_types: string[]; status: string };

if (!chromiumAvailable) {
  it.skip(`console pages end-to-end: ${chromiumMissing}`, () => {});
} else {
  let s: ConsoleService;
  let receiver: Receiver;
  let demoId: string;
  let runnerId: string;
  const BAD_LINES = 12;

  beforeAll(async () => {
    s = await startConsoleService({ oura: true });
    receiver = await Receiver.start();
    demoId = await demoUser(s);
    // The fixture's own bad lines plus twelve more: more rejected records than the table shows at first.
    const bad = Array.from({ length: BAD_LINES }, (_, i) => JSON.stringify({ kind: 'quantity', 'not a record': i })).join('\n');
    runnerId = await uploadUser(s, 'runner', `${FIXTURE_A_NDJSON.trimEnd()}\n${bad}\n`);
    await connectOura(s, runnerId);
    // A tenant's own reference can be long: the user pickers must not push the page wider than a phone.
    await s.t.createUser(s.tenant.apiKey, { external_ref: 'crm-account-000000001234567890/patient-enrolment-2026-programme-cardiology-north' });
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
  });

  describe('console pages', () => {
    it('carries the user just viewed to Sources and Pipeline (in the address), and a user chosen there back', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${demoId}`);
      await page.getByRole('heading', { level: 1, name: 'demo-user' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Sections' });
      await nav.getByRole('link', { name: 'Sources' }).click();
      await expect.poll(() => page.evaluate('location.hash')).toBe(`#/sources/${demoId}`);
      await expect.poll(() => page.getByLabel('User', { exact: true }).inputValue()).toBe(demoId);
      await nav.getByRole('link', { name: 'Webhooks' }).click();
      await nav.getByRole('link', { name: 'Pipeline' }).click();
      await expect.poll(() => page.evaluate('location.hash')).toBe(`#/pipeline/${demoId}`);
      await expect.poll(() => page.getByLabel('User', { exact: true }).inputValue()).toBe(demoId);
      // Another user chosen on Pipeline is the one Sources opens on next.
      await page.getByLabel('User', { exact: true }).selectOption(runnerId);
      await expect.poll(() => page.evaluate('location.hash')).toBe(`#/pipeline/${runnerId}`);
      await nav.getByRole('link', { name: 'Sources' }).click();
      await expect.poll(() => page.evaluate('location.hash')).toBe(`#/sources/${runnerId}`);
      await expect.poll(() => page.getByLabel('User', { exact: true }).inputValue()).toBe(runnerId);
      expect(errors).toEqual([]);
    });

    it('creates, edits and deletes a webhook endpoint; the secret is shown once and signs the deliveries; Replay is offered for a delivered one', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/webhooks`);
      await page.getByText('No webhook endpoints yet.').waitFor();
      const url = receiver.url('/console-hook');
      await page.getByRole('button', { name: 'Add an endpoint' }).click();
      const form = page.getByTestId('webhook-create');
      await form.getByLabel('URL').fill(url);
      await form.getByLabel('Description').fill('made in the console');
      await form.getByLabel('webhook.test').check();
      await form.getByLabel('data.written').check();
      await form.getByRole('button', { name: 'Create endpoint' }).click();
      const secretField = page.getByLabel(`Signing secret of ${url}`);
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      expect(secret).toMatch(/^whsec_/);
      const listed = await eventually(async () => (await s.api<{ data: (Webhook & { secret?: string })[] }>('/v1/webhooks')).data.find((w) => w.url === url));
      expect(listed).toMatchObject({ description: 'made in the console', event_types: ['data.written', 'webhook.test'], status: 'active' });
      expect(listed.secret).toBeUndefined();
      await expect.poll(() => page.evaluate('location.hash')).toBe(`#/webhooks/${listed.id}`);
      await shot(page, 'webhooks-new');

      // The secret the page showed is the one the deliveries are signed with.
      receiver.trust('/console-hook', secret);
      await page.getByRole('button', { name: 'Send test event' }).click();
      const queued = Number(/queued as delivery (\d+)\./.exec((await page.getByText(/^Test event queued as delivery/).textContent())!)![1]);
      await receiver.waitFor((all) => all.some((r) => r.path === '/console-hook' && r.verified !== null));
      await eventually(async () => (await s.api<{ status: string }>(`/v1/webhooks/${listed.id}/deliveries/${queued}`)).status === 'done');
      await page.getByLabel('Status', { exact: true }).selectOption('done');
      await page.waitForSelector(`[data-testid=deliveries] li[data-delivery-id="${queued}"]`);
      expect(await page.locator(`li[data-delivery-id="${queued}"] [data-field=attempts]`).textContent()).toBe('1 attempt');
      await page.getByRole('button', { name: `Replay delivery ${queued}` }).click();
      const replayed = Number(/Replayed as delivery (\d+)\./.exec((await page.getByText(/^Replayed as delivery/).textContent())!)![1]);
      expect((await s.api<{ replay_of: number }>(`/v1/webhooks/${listed.id}/deliveries/${replayed}`)).replay_of).toBe(queued);
      await shot(page, 'webhooks');

      // Shown once: gone as soon as the operator leaves the page.
      await page.goto(`${s.base}/console/#/users`);
      // Left for the users page (a hash change: the router swaps the view once it handles it).
      await page.locator('.once').waitFor({ state: 'detached' });
      await page.goto(`${s.base}/console/#/webhooks/${listed.id}`);
      await page.waitForSelector(`[data-testid=webhooks-table] tr[data-webhook-id="${listed.id}"]`);
      expect(await page.locator('.once').count()).toBe(0);

      // Edit: the description and the event types, sent as a PATCH of what changed.
      await page.getByRole('button', { name: `Edit endpoint ${url}` }).click();
      const edit = page.getByTestId('webhook-edit');
      await edit.getByLabel('Description').fill('renamed in the console');
      await edit.getByLabel('data.written').uncheck();
      await edit.getByRole('button', { name: 'Save endpoint' }).click();
      await page.getByText(`Endpoint ${url} saved.`).waitFor();
      const edited = (await s.api<{ data: Webhook[] }>('/v1/webhooks')).data.find((w) => w.id === listed.id)!;
      expect(edited).toMatchObject({ description: 'renamed in the console', event_types: ['webhook.test'], status: 'active' });
      await expect.poll(() => page.locator(`tr[data-webhook-id="${listed.id}"] [data-field=description]`).textContent()).toBe('renamed in the console');

      // Delete, after a confirmation.
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: `Delete endpoint ${url}` }).click();
      await page.getByText(`Endpoint ${url} deleted.`).waitFor();
      expect((await s.api<{ data: Webhook[] }>('/v1/webhooks')).data.some((w) => w.id === listed.id)).toBe(false);
      await expect.poll(() => page.evaluate('location.hash')).toBe('#/webhooks');
      await page.getByText('No webhook endpoints yet.').waitFor();
      const audit = await eventually(async () => {
        const log = await s.api<{ data: { action: string }[] }>('/v1/audit-log', { limit: '50' });
        return log.data.some((e) => e.action === 'webhook.delete') && log;
      });
      expect(audit.data.map((e) => e.action)).toEqual(expect.arrayContaining(['webhook.create', 'webhook.test', 'webhook.replay', 'webhook.update', 'webhook.delete']));
      expect(errors).toEqual([]);
    });

    it('offers Replay only for final deliveries: one still being retried says so instead', async () => {
      const created = await s.t.call('POST', '/v1/webhooks', { key: s.tenant.apiKey, body: { url: 'http://127.0.0.1:9/nobody-listens' } });
      expectStatus(created, 201);
      const hookId = (created.json() as { id: string }).id;
      const test = await s.t.call('POST', `/v1/webhooks/${hookId}/test`, { key: s.tenant.apiKey });
      expectStatus(test, 202);
      const deliveryId = (test.json() as { id: number }).id;
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/webhooks/${hookId}`);
      const item = page.locator(`[data-testid=deliveries] li[data-delivery-id="${deliveryId}"]`);
      await item.waitFor();
      const status = (await s.api<{ status: string }>(`/v1/webhooks/${hookId}/deliveries/${deliveryId}`)).status;
      expect(['pending', 'running']).toContain(status);
      expect(await item.getByRole('button', { name: `Replay delivery ${deliveryId}` }).count()).toBe(0);
      expect(await item.locator('[data-field=replay]').textContent()).toMatch(/^replay once final \(still (pending|running)\)$/);
      expectStatus(await s.t.call('DELETE', `/v1/webhooks/${hookId}`, { key: s.tenant.apiKey }), 204);
      expect(errors).toEqual([]);
    });

    it('counts a succeeded sync run as one attempt, lists rejected records in line order, and folds long tables', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/pipeline/${runnerId}`);
      await page.waitForSelector('[data-testid=sync-runs-table][data-provider=oura] tr[data-run-id]');
      const runs = await s.api<{ data: { id: number; status: string; attempts: number }[] }>(`/v1/users/${runnerId}/sync-runs`);
      const backfill = runs.data.find((r) => r.status === 'succeeded')!;
      expect(backfill.attempts).toBe(0);
      const cell = page.locator(`[data-testid=sync-runs-table] tr[data-run-id="${backfill.id}"] [data-field=attempts]`);
      expect(await cell.textContent()).toBe('1 attempt');

      const rejected = await s.api<{ data: { location: string }[] }>(`/v1/users/${runnerId}/rejected-records`, { limit: '1000' });
      expect(rejected.data.length).toBeGreaterThan(10);
      const lineOf = (loc: string) => Number(/^line (\d+)$/.exec(loc)![1]);
      const inOrder = rejected.data.map((r) => r.location).sort((a, b) => lineOf(a) - lineOf(b));
      const shown = () => page.$$eval('[data-testid=rejected-table] [data-field=location]', (tds) => tds.map((td) => td.textContent));
      await page.waitForSelector('[data-testid=rejected-table] tbody tr');
      expect(await shown()).toEqual(inOrder.slice(0, 10));
      await page.getByRole('button', { name: `Show all ${rejected.data.length} (${rejected.data.length - 10} more)` }).click();
      expect(await shown()).toEqual(inOrder);
      await page.getByRole('button', { name: 'Show the first 10' }).click();
      await shot(page, 'pipeline');
      expect(errors).toEqual([]);
    });

    it('no page scrolls sideways at 390 px, and the Pipeline page stays a phone’s scroll long', async () => {
      const hook = await s.t.call('POST', '/v1/webhooks', { key: s.tenant.apiKey, body: { url: 'http://127.0.0.1:9/a-rather-long-path/that-goes-on/and-on/for-a-phone', description: 'phone width' } });
      expectStatus(hook, 201);
      const hookId = (hook.json() as { id: string }).id;
      expectStatus(await s.t.call('POST', `/v1/webhooks/${hookId}/test`, { key: s.tenant.apiKey }), 202);
      const { page, errors } = await openPage(s.browser, { width: 390, height: 844 });
      const overflow = () => page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]') as Promise<[number, number]>;
      await page.goto(`${s.base}/console/`);
      const [w0, c0] = await overflow();
      expect(w0, 'sign-in').toBeLessThanOrEqual(c0);
      await signIn(page, s.base, s.tenant.apiKey);
      const pages: [string, string][] = [
        ['users', '[data-testid=users-table] tbody tr'],
        [`users/${demoId}`, '[data-testid=hypnogram]'],
        [`users/${runnerId}`, '[data-testid=health-table]'],
        [`sources/${demoId}`, '[data-testid=orders]'],
        [`webhooks/${hookId}`, '[data-testid=deliveries] li'],
        [`pipeline/${runnerId}`, '[data-testid=sync-runs-table]'],
        ['audit', '[data-testid=audit-table] tbody tr'],
      ];
      const heights: Record<string, number> = {};
      for (const [hash, ready] of pages) {
        await page.goto(`${s.base}/console/#/${hash}`);
        await page.waitForSelector(ready, { state: 'attached' });
        await settled(page);
        const [width, client] = await overflow();
        expect(width, `#/${hash} is ${width} px wide in a ${client} px window`).toBeLessThanOrEqual(client);
        heights[hash.split('/')[0]!] = (await page.evaluate('document.documentElement.scrollHeight')) as number;
      }
      // The issue measured 8,124 px; with tables folded it is about 1,300 px here (a bound with room, not a target).
      expect(heights.pipeline).toBeLessThan(3000);
      await page.goto(`${s.base}/console/#/pipeline/${runnerId}`);
      await page.waitForSelector('[data-testid=sync-runs-table]');
      await settled(page);
      await shot(page, 'pipeline-phone');
      // The admin's pages too.
      await signIn(page, s.base, s.t.adminKey);
      await page.goto(`${s.base}/console/#/admin/${s.tenant.id}`);
      await page.waitForSelector('[data-testid=keys-table] tbody tr');
      await settled(page);
      const [aw, ac] = await overflow();
      expect(aw, 'admin').toBeLessThanOrEqual(ac);
      expect(errors).toEqual([]);
    });
  });
}
