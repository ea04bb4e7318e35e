import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_A_NDJSON } from '../ingest/uploadHelpers.js';
import { chromiumAvailable, chromiumMissing, openPage } from '../support/chromium.js';
import { expectStatus } from '../support/server.js';
import { eventually, Receiver } from '../webhooks/receiver.js';
import { settled, shot, signIn, startConsoleService, uploadUser, type ConsoleService } from './consoleService.js';

/**
 * Issue 36 point 8, the console at 390 px and honest: the columns an operator acts on are in the
 * viewport at a phone's width (Uploads: Status, Records, Rejected; the sources' Connection and
 * Action; Pipeline: Reason; Webhooks: Edit, Delete), a table that still scrolls says so, old data
 * just imported reads "imported" (not "fresh"), the page opens on the night rather than the nap
 * after it, a nap's hypnogram has time ticks, the y axis's label fits, "1 bucket", no "0.0 MiB",
 * and a delivery's row says when, its status, its attempts and the endpoint's answer.
 *
 * The user is fixture A's HealthKit upload (device-a): records of 2026-11-01 and 02 with a night
 * (22:30 to 06:35) and a 40-minute unstaged nap at 13:00 after it, and a few bad lines.
 */
const PHONE = { width: 390, height: 844 };
const LONG_PATH = '/a-rather-long-path/that-goes-on/and-on/for-a-phone';

type Session = { id: number; bedtime_start: string; bedtime_end: string; total_sleep_seconds: number | null };
type Box = { left: number; right: number; width: number };

/** The header cell and the first row's cell of the column headed `header` in the table `testid`, as laid out on the screen. */
async function columnBoxes(page: Page, testid: string, header: string): Promise<{ head: Box; cell: Box }> {
  const found = (await page.evaluate(`(() => {
    const table = document.querySelector('[data-testid="${testid}"]');
    const heads = [...table.querySelectorAll('thead tr:last-child th')];
    const i = heads.findIndex((th) => th.textContent.trim() === ${JSON.stringify(header)});
    if (i < 0) return null;
    const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, width: r.width }; };
    return { head: box(heads[i]), cell: box(table.querySelector('tbody tr').children[i]) };
  })()`)) as { head: Box; cell: Box } | null;
  if (!found) throw new Error(`no column ${header} in ${testid}`);
  return found;
}

/** The column is on the screen without scrolling its table: both its header and its first cell lie within 0..390. */
async function expectColumnInView(page: Page, testid: string, header: string): Promise<void> {
  const { head, cell } = await columnBoxes(page, testid, header);
  for (const [what, b] of [['header', head], ['first cell', cell]] as const) {
    expect(b.width, `${testid} ${header} ${what} is laid out`).toBeGreaterThan(0);
    expect(b.left, `${testid} ${header} ${what} starts in view`).toBeGreaterThanOrEqual(0);
    expect(b.right, `${testid} ${header} ${what} ends in view (${b.right} px)`).toBeLessThanOrEqual(PHONE.width);
  }
}

async function expectInView(page: Page, name: string): Promise<void> {
  const b = await page.getByRole('button', { name, exact: true }).boundingBox();
  expect(b, name).not.toBeNull();
  expect(b!.x, `${name} starts in view`).toBeGreaterThanOrEqual(0);
  expect(b!.x + b!.width, `${name} ends in view`).toBeLessThanOrEqual(PHONE.width);
}

if (!chromiumAvailable) {
  it.skip(`console at phone width: ${chromiumMissing}`, () => {});
} else {
  let s: ConsoleService;
  let receiver: Receiver;
  let userId: string;

  beforeAll(async () => {
    s = await startConsoleService();
    receiver = await Receiver.start();
    userId = await uploadUser(s, 'phone-runner', FIXTURE_A_NDJSON);
  });
  afterAll(async () => {
    await s?.close();
    await receiver?.close();
  });

  describe('the console at 390 px', () => {
    it('a user’s page: the uploads’ outcome and the sources’ connection and action in view, a cue where the table scrolls, "imported" beside an old lag, sizes in KiB', async () => {
      const { page, errors } = await openPage(s.browser, PHONE);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${userId}`);
      await page.waitForSelector('[data-testid=uploads] tbody tr');
      await page.waitForSelector('[data-testid=health-table] tbody tr');
      await settled(page);
      for (const column of ['Status', 'Records', 'Rejected']) await expectColumnInView(page, 'uploads', column);
      for (const column of ['Freshness', 'Connection', 'Action']) await expectColumnInView(page, 'health-table', column);

      // The uploads table still scrolls at this width, and says so; its cue scrolls the rest in.
      const uploads = page.locator('section[aria-labelledby=uploads-h]');
      const cue = uploads.getByTestId('scroll-cue');
      expect(await cue.textContent()).toMatch(/^\d+ more columns? →$/);
      const cueBox = (await cue.boundingBox())!;
      expect(cueBox.x + cueBox.width).toBeLessThanOrEqual(PHONE.width);
      await cue.click();
      await expect.poll(() => uploads.locator('.scroll').evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);

      // The import's data is weeks old though it arrived just now: the API says fresh (received lately), the page "imported".
      const [f] = (await s.api<{ data: { provider: string; state: string; lag_seconds: number }[] }>(`/v1/users/${userId}/freshness`)).data;
      expect(f).toMatchObject({ provider: 'device-a', state: 'fresh' });
      expect(f!.lag_seconds).toBeGreaterThan(48 * 3600);
      const state = page.locator('[data-testid=health-table] tr[data-provider=device-a] [data-field=state]');
      expect(await state.textContent()).toBe('imported');
      expect(await state.locator('[data-state]').getAttribute('title')).toMatch(/^Received \d{4}-\d{2}-\d{2} \d{2}:\d{2}; its newest record ends .* ago$/);

      // A few kilobytes read in KiB; "0.0 MiB" nowhere.
      const upload = (await s.api<{ data: { bytes: number; records: Record<string, number> }[] }>(`/v1/users/${userId}/uploads`)).data[0]!;
      const stored = Object.values(upload.records).reduce((a, b) => a + b, 0);
      expect(await page.locator('[data-testid=uploads] [data-field=records]').first().textContent()).toMatch(new RegExp(`^${stored}: [a-z_]+ \\d+`));
      expect(upload.bytes).toBeLessThan(0.1 * 1024 * 1024);
      expect(await page.locator('[data-testid=uploads] [data-field=bytes]').first().textContent()).toBe(`${(upload.bytes / 1024).toFixed(1)} KiB`);
      expect(await page.evaluate('document.body.innerText')).not.toContain('0.0 MiB');
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await uploads.locator('.scroll').evaluate((el) => el.scrollTo({ left: 0 }));
      await shot(page, 'user-import-phone');
      expect(errors).toEqual([]);
    });

    it('a table that fits has no scroll cue (the same uploads at desktop width)', async () => {
      const { page, errors } = await openPage(s.browser, { width: 1400, height: 900 });
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${userId}`);
      await page.waitForSelector('[data-testid=uploads] tbody tr');
      await settled(page);
      expect(await page.locator('section[aria-labelledby=uploads-h] [data-testid=scroll-cue]').count()).toBe(0);
      expect(errors).toEqual([]);
    });

    it('sleep opens on the night, not the nap after it; the unstaged nap shows "—" stages and a hypnogram with time ticks', async () => {
      const { page, errors } = await openPage(s.browser, PHONE);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${userId}`);
      // The last 30 days hold nothing: the page opens on the 30 days up to the latest record (docs/console.md).
      await page.getByTestId('window-note').waitFor();
      await page.waitForSelector('[data-testid=sleep-summary]');
      const start = await page.getByLabel('From', { exact: true }).inputValue();
      const end = await page.getByLabel('To (excluded)', { exact: true }).inputValue();
      const sessions = (await s.api<{ data: Session[] }>(`/v1/users/${userId}/sleep`, { start, end, limit: '1000' })).data;
      const nap = sessions.reduce((a, b) => (Date.parse(b.bedtime_end) > Date.parse(a.bedtime_end) ? b : a));
      const night = sessions.find((x) => x.bedtime_start === '2026-11-01T22:30:00.000Z' || x.bedtime_start === '2026-11-01T22:30:00Z')!;
      expect(night, 'the fixture night is in the window').toBeDefined();
      expect(nap.id).not.toBe(night.id);
      expect(Date.parse(nap.bedtime_end) - Date.parse(nap.bedtime_start)).toBeLessThanOrEqual(40 * 60_000);
      expect(await page.getByTestId('sleep-summary').getAttribute('data-session-id')).toBe(String(night.id));

      await page.getByTestId('sleep-select').selectOption(String(nap.id));
      await page.waitForSelector(`[data-testid=sleep-summary][data-session-id="${nap.id}"]`);
      for (const field of ['deep_sleep_seconds', 'rem_sleep_seconds', 'light_sleep_seconds']) expect(await page.locator(`[data-testid=sleep-summary] [data-field=${field}]`).textContent()).toBe('—');
      await page.waitForSelector('[data-testid=hypnogram] svg');
      const ticks = await page.$$eval('[data-testid=hypnogram] g[data-tick]', (gs) => gs.map((g) => g.getAttribute('data-tick')!));
      expect(ticks.length, `ticks of a 40-minute nap: ${ticks.join(' ')}`).toBeGreaterThanOrEqual(2);
      for (const t of ticks) expect(t).toMatch(/^\d{2}:\d{2}$/);
      expect(new Set(ticks).size).toBe(ticks.length);
      await page.locator('section[aria-labelledby=sleep-h]').scrollIntoViewIfNeeded();
      expect(errors).toEqual([]);
    });

    it('a metric of one bucket says "1 bucket", and the y axis’s label fits the plot even for a long metric name', async () => {
      const { page, errors } = await openPage(s.browser, PHONE);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${userId}`);
      await page.getByTestId('window-note').waitFor();
      await page.getByTestId('metric-select').selectOption('blood_pressure_diastolic');
      await page.waitForSelector('[data-testid=metric-chart][data-type=blood_pressure_diastolic] .chart canvas');
      await settled(page);
      expect(await page.locator('[data-testid=metric-chart] summary').textContent()).toBe('Data table (1 bucket)');
      expect(await page.getByTestId('winners').textContent()).toMatch(/ in 1 bucket$/);
      expect(await page.getByTestId('chart-title').textContent()).toBe('blood_pressure_diastolic: mean per day (mmHg, UTC)');
      // What uPlot drew: the y axis's label (rotated along the plot's height) and its tick values (across the axis), measured in its own fonts.
      const y = (await page.evaluate(`(() => {
        const u = document.querySelector('[data-testid=metric-chart] .chart').uplot;
        const axis = u.axes[1];
        const ctx = document.createElement('canvas').getContext('2d');
        const width = (text, font) => { ctx.font = font; return ctx.measureText(text).width; };
        return {
          label: axis.label,
          labelWidth: width(axis.label, axis.labelFont[0]) / devicePixelRatio,
          plotHeight: u.bbox.height / devicePixelRatio,
          widestValue: Math.max(...axis._values.map((v) => width(String(v), axis.font[0]))) / devicePixelRatio,
          room: axis._size - axis.ticks.size - axis.gap,
        };
      })()`)) as { label: string; labelWidth: number; plotHeight: number; widestValue: number; room: number };
      expect(y.label).toBe('mmHg');
      expect(y.labelWidth).toBeLessThanOrEqual(y.plotHeight);
      expect(y.widestValue).toBeLessThanOrEqual(y.room);
      expect(errors).toEqual([]);
    });

    it('Pipeline: a rejected record’s reason is in view', async () => {
      const { page, errors } = await openPage(s.browser, PHONE);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/pipeline/${userId}`);
      await page.waitForSelector('[data-testid=rejected-table] tbody tr');
      await settled(page);
      for (const column of ['Where', 'Reason']) await expectColumnInView(page, 'rejected-table', column);
      expect(errors).toEqual([]);
    });

    it('Webhooks: Edit and Delete in view beside a long URL; a delivery’s row says when, its status, its attempts and the answer', async () => {
      const url = receiver.url(LONG_PATH);
      const hook = await s.t.call('POST', '/v1/webhooks', { key: s.tenant.apiKey, body: { url, description: 'phone width' } });
      expectStatus(hook, 201);
      const hookId = (hook.json() as { id: string }).id;
      const test = await s.t.call('POST', `/v1/webhooks/${hookId}/test`, { key: s.tenant.apiKey });
      expectStatus(test, 202);
      const deliveryId = (test.json() as { id: number }).id;
      const delivered = await eventually(async () => {
        const d = await s.api<{ status: string; created_at: string; last_status_code: number | null }>(`/v1/webhooks/${hookId}/deliveries/${deliveryId}`);
        return d.status === 'done' && d;
      });

      const { page, errors } = await openPage(s.browser, PHONE);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/webhooks/${hookId}`);
      await page.waitForSelector(`[data-testid=deliveries] li[data-delivery-id="${deliveryId}"]`);
      await settled(page);
      await expectInView(page, `Edit endpoint ${url}`);
      await expectInView(page, `Delete endpoint ${url}`);
      expect(await page.getByRole('heading', { name: `Deliveries to ${url}` }).count()).toBe(1);
      const row = page.locator(`li[data-delivery-id="${deliveryId}"]`);
      const field = (name: string) => row.locator(`[data-field=${name}]`).first().textContent();
      expect(await field('created_at')).toBe(`${delivered.created_at.slice(0, 10)} ${delivered.created_at.slice(11, 16)}`);
      expect(await field('event_type')).toBe('webhook.test');
      expect(await field('status')).toBe('done');
      expect(await field('attempts')).toBe('1 attempt');
      expect(await field('last_status_code')).toBe(`HTTP ${delivered.last_status_code}`);
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await shot(page, 'webhooks-phone');
      expect(errors).toEqual([]);
    });
  });
}
