import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, chromiumMissing, openPage } from '../support/chromium.js';
import { DAY_MS, demoUser, heartRateLines, isoDate, shot, signIn, startConsoleService, uploadUser, utcDay, type ConsoleService } from './consoleService.js';

/**
 * Issue 23, console: charts that do not mislead, in headless Chromium against a running service.
 * Days without data are gaps, the day still filling is marked, every date is ISO 8601 (inputs, axes,
 * tables), the window opens on a user's latest data, lags read as words, the heatmap names its
 * months, and the hypnogram keeps readable labels on a phone.
 */
type Drawn = { data: (number | null)[][]; labels: string[]; spanGaps: (boolean | undefined)[]; xTicks: string[]; classes: (string | undefined)[] };

/** What uPlot was given and drew for the metric chart (the instance hangs on its element). */
const drawn = (page: Page): Promise<Drawn> =>
  page.$eval('[data-testid=metric-chart] .chart', (el) => {
    const u = (el as unknown as { uplot: { data: (number | null)[][]; series: { label?: string; spanGaps?: boolean; class?: string }[]; axes: { _values?: string[] }[] } }).uplot;
    return { data: u.data.map((d) => [...d]), labels: u.series.map((s) => s.label ?? ''), spanGaps: u.series.map((s) => s.spanGaps), classes: u.series.map((s) => s.class), xTicks: u.axes[0]!._values ?? [] };
  });

/** A date written the US or European way: what the console must never show. */
const LOCAL_DATE = /\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b/;

if (!chromiumAvailable) {
  it.skip(`console charts end-to-end: ${chromiumMissing}`, () => {});
} else {
  let s: ConsoleService;
  let archiveId: string;
  let todayId: string;
  let demoId: string;
  // The archive user's readings: two days, three empty days, two days; all more than 30 days ago.
  const archiveDays = [70, 69, 65, 64];
  let latest: number;

  beforeAll(async () => {
    // Days here are counted back from today (UTC): a run that straddles midnight would count from two todays.
    const toMidnight = DAY_MS - (Date.now() % DAY_MS);
    if (toMidnight < 60_000) await new Promise((r) => setTimeout(r, toMidnight + 1000));
    s = await startConsoleService();
    latest = utcDay(64) + 18 * 3_600_000;
    demoId = await demoUser(s);
    archiveId = await uploadUser(
      s,
      'archive-user',
      heartRateLines(archiveDays.flatMap((d) => [8, 12, 18].map((h) => ({ at: utcDay(d) + h * 3_600_000, bpm: 60 + d % 7 + h / 6, from: d > 66 ? ('ring' as const) : ('watch' as const) })))),
    );
    // Yesterday both sources reported; today only the ring has, once, so far.
    const now = Date.now();
    todayId = await uploadUser(
      s,
      'today-user',
      heartRateLines([
        { at: utcDay(1) + 8 * 3_600_000, bpm: 76, from: 'watch' },
        { at: utcDay(1) + 12 * 3_600_000, bpm: 74, from: 'watch' },
        { at: utcDay(1) + 9 * 3_600_000, bpm: 73, from: 'ring' },
        { at: Math.max(utcDay(0, now), now - 60_000), bpm: 52, from: 'ring' },
      ]),
    );
  });
  afterAll(async () => {
    await s?.close();
  });

  describe('console charts', () => {
    it('opens on the latest data when the last 30 days are empty, says so, and draws the days without data as gaps', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${archiveId}`);
      const note = page.getByTestId('window-note');
      await note.waitFor();
      expect(await note.textContent()).toContain(isoDate(latest));
      // The 30 days up to the latest record (the freshness report's synced_through), end excluded.
      // The fields take a new window one render after the note (DateField keeps what is typed): polled.
      await expect.poll(() => page.getByLabel('From', { exact: true }).inputValue()).toBe(isoDate(utcDay(64) - 29 * DAY_MS));
      await expect.poll(() => page.getByLabel('To (excluded)', { exact: true }).inputValue()).toBe(isoDate(utcDay(63)));
      await page.waitForSelector('[data-testid=coverage-heatmap] td[data-records]');
      const busy = await page.$$eval('[data-testid=coverage-heatmap] td[data-records]', (tds) => tds.filter((td) => Number(td.getAttribute('data-records')) > 0).map((td) => td.getAttribute('data-date')));
      expect(busy).toEqual(archiveDays.map((d) => isoDate(utcDay(d))));

      // Days: the line stops after day 69 and starts again at day 65; uPlot gets a null between them and spanGaps stays off.
      await page.waitForSelector('[data-testid=metric-chart][data-interval=day] .chart canvas');
      const chart = page.getByTestId('metric-chart');
      const gaps = JSON.parse((await chart.getAttribute('data-gaps'))!) as string[][];
      expect(gaps.map((g) => g.map((start) => start.slice(0, 10)))).toEqual([[isoDate(utcDay(69)), isoDate(utcDay(65))]]);
      const days = await drawn(page);
      expect(days.labels[1]).toBe('merged');
      expect(days.spanGaps.slice(1).every((g) => g === false)).toBe(true);
      const xs = days.data[0]!;
      const at = (d: number) => xs.indexOf(utcDay(d) / 1000);
      expect(at(69)).toBeGreaterThan(-1);
      expect(at(65)).toBe(at(69) + 2);
      expect(days.data[1]![at(69) + 1]).toBeNull();
      expect(days.data[1]![at(69)]).not.toBeNull();
      expect(days.data[1]![at(65)]).not.toBeNull();
      expect(await page.getByTestId('gaps-note').textContent()).toContain('1 gap');
      await shot(page, 'user-archive');
      // Hours: readings at 08, 12 and 18 make gaps inside each day as well.
      await page.getByLabel('Interval', { exact: true }).selectOption('hour');
      await page.waitForSelector('[data-testid=metric-chart][data-interval=hour] .chart canvas');
      const hours = await drawn(page);
      const h8 = hours.data[0]!.indexOf((utcDay(70) + 8 * 3_600_000) / 1000);
      expect(hours.data[1]![h8]).not.toBeNull();
      expect(hours.data[1]![h8 + 1]).toBeNull();
      expect(hours.data[0]![h8 + 2]).toBe((utcDay(70) + 12 * 3_600_000) / 1000);
      // The operator goes back to the last 30 days: empty, as the note said.
      await page.getByRole('button', { name: 'Show the last 30 days' }).click();
      await expect.poll(() => page.getByLabel('To (excluded)', { exact: true }).inputValue()).toBe(isoDate(utcDay(-1)));
      await page.getByText('No records in this window.').waitFor();
      expect(await page.getByTestId('window-note').count()).toBe(0);
      expect(errors).toEqual([]);
    });

    it('marks the day still filling as partial: out of the solid line, hollow and dotted, with a note and a table mark', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${todayId}`);
      await page.waitForSelector('[data-testid=metric-chart][data-interval=day] .chart canvas');
      const today = isoDate(Date.now());
      const chart = page.getByTestId('metric-chart');
      expect(await chart.getAttribute('data-partial-start')).toMatch(new RegExp(`^${today}T00:00:00`));
      expect(await page.getByTestId('partial-note').textContent()).toContain(`The current day, ${today} (UTC), is still filling`);
      const d = await drawn(page);
      const xs = d.data[0]!;
      const t = xs.indexOf(utcDay(0) / 1000);
      const y = xs.indexOf(utcDay(1) / 1000);
      expect(y).toBe(t - 1);
      // The merged line ends yesterday; its dotted companion holds yesterday and today (52, the ring's one reading).
      const partial = d.labels.indexOf('merged (so far)');
      expect(d.classes[partial]).toBe('partial-series');
      expect(d.data[1]![t]).toBeNull();
      expect(d.data[1]![y]).not.toBeNull();
      expect(d.data[partial]![t]).toBe(52);
      expect(d.data[partial]![y]).toBe(d.data[1]![y]);
      // Every source's line also ends at the last complete day.
      for (let k = 2; k < partial; k++) expect(d.data[k]![t]).toBeNull();
      const rows = await page.$$eval('[data-testid=stats-table] tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-start')!.slice(0, 10), tr.getAttribute('data-partial'), tr.querySelector('td')!.textContent]));
      expect(rows).toEqual([
        [isoDate(utcDay(1)), null, `${isoDate(utcDay(1))} 00:00`],
        [today, 'true', `${today} 00:00 (partial)`],
      ]);
      await shot(page, 'user-partial');
      expect(errors).toEqual([]);
    });

    it('writes every date as ISO 8601 (YYYY-MM-DD, 24-hour times): inputs, axis ticks, tables; the heatmap names its months and lags read as words', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${demoId}`);
      await page.getByRole('button', { name: '90 days' }).click();
      await page.waitForSelector('[data-testid=metric-chart][data-interval=day] .chart canvas');
      await page.waitForSelector('[data-testid=hypnogram]');
      for (const label of ['From', 'To (excluded)']) {
        const input = page.getByLabel(label, { exact: true });
        expect(await input.getAttribute('type')).toBe('text');
        expect(await input.inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
      // A date typed another way is refused with a hint, and the window stays.
      const from = await page.getByLabel('From', { exact: true }).inputValue();
      await page.getByLabel('From', { exact: true }).fill('11/01/2026');
      await page.getByText('a day as YYYY-MM-DD').waitFor();
      expect(await page.getByLabel('From', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      await page.getByLabel('From', { exact: true }).fill(from);
      const ticks = (await drawn(page)).xTicks;
      expect(ticks.length).toBeGreaterThan(1);
      for (const tick of ticks) expect(tick).toMatch(/^(\d{4}-\d{2}(-\d{2})?|\d{2}:\d{2}(\n\d{4}-\d{2}-\d{2})?)$/);
      await page.getByLabel('Interval', { exact: true }).selectOption('hour');
      await page.getByLabel('Time zone', { exact: true }).selectOption('Asia/Tokyo');
      await page.waitForSelector('[data-testid=metric-chart][data-interval=hour][data-tz="Asia/Tokyo"] .chart canvas');
      for (const tick of (await drawn(page)).xTicks) expect(tick).toMatch(/^(\d{4}-\d{2}(-\d{2})?|\d{2}:\d{2}(\n\d{4}-\d{2}-\d{2})?)$/);
      // Tables and every other text on the page: ISO dates, no M/D/Y or D.M.Y anywhere.
      await page.locator('summary', { hasText: 'Data table' }).click();
      await page.locator('summary', { hasText: 'Phases table' }).click();
      const text = (await page.evaluate('document.body.innerText')) as string;
      expect(text).not.toMatch(LOCAL_DATE);
      expect(text).toMatch(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
      expect(await page.locator('[data-testid=stats-table] tbody tr td:first-child').first().textContent()).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);

      // Heatmap: a row of months (YYYY-MM) over the days, each spanning its days.
      const months = await page.$$eval('[data-testid=heatmap-months] th', (ths) => ths.map((th) => [th.getAttribute('data-month'), th.textContent, Number(th.getAttribute('colspan') ?? 1)]));
      const dates = await page.$$eval('[data-testid=coverage-heatmap] tbody tr:first-child td[data-date]', (tds) => tds.map((td) => td.getAttribute('data-date')!));
      expect(dates).toHaveLength(90);
      const expected = [...new Set(dates.map((d) => d.slice(0, 7)))].map((m) => [m, m, dates.filter((d) => d.startsWith(m)).length]);
      expect(months).toEqual(expected);

      // Lag in words, the seconds kept in the cell's data.
      const freshness = await s.api<{ data: { provider: string; lag_seconds: number | null }[] }>(`/v1/users/${demoId}/freshness`);
      for (const f of freshness.data) {
        const cell = page.locator(`[data-testid=health-table] tr[data-provider="${f.provider}"] [data-field=lag_seconds]`);
        const shown = (await cell.textContent())!;
        expect(shown).toMatch(/^(\d+ s|\d+ min|\d+ h( \d+ min)?|\d+ d( \d+ h)?|\d+ days|\d+\.\d years|—)$/);
        if (f.lag_seconds !== null) expect(Math.abs(Number(await cell.getAttribute('data-value')) - f.lag_seconds)).toBeLessThan(120);
      }
      expect(errors).toEqual([]);
    });

    it('the archive user’s lag of about two months reads in days', async () => {
      const { page, errors } = await openPage(s.browser);
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${archiveId}`);
      const cell = page.locator('[data-testid=health-table] tr[data-provider="device-a"] [data-field=lag_seconds]');
      await cell.waitFor();
      const seconds = Number(await cell.getAttribute('data-value'));
      expect(seconds).toBeGreaterThan(63 * 86_400);
      expect(await cell.textContent()).toBe(`${Math.floor(seconds / 86_400)} days`);
      expect(await cell.getAttribute('title')).toBe(`${seconds} s`);
      expect(errors).toEqual([]);
    });

    it('the hypnogram is drawn at the phone’s own width, so its labels keep their size', async () => {
      const { page, errors } = await openPage(s.browser, { width: 390, height: 844 });
      await signIn(page, s.base, s.tenant.apiKey);
      await page.goto(`${s.base}/console/#/users/${demoId}`);
      await page.waitForSelector('[data-testid=hypnogram] svg');
      // In the page (a string: the test's own types have no DOM): the drawing's scale, its labels' size and the hour ticks' boxes.
      const m = (await page.evaluate(`(() => {
        const svg = document.querySelector('[data-testid=hypnogram] svg');
        const box = svg.getBoundingClientRect();
        const rect = (t) => { const r = t.getBoundingClientRect(); return { left: r.left, right: r.right, height: r.height }; };
        return {
          scale: box.width / svg.viewBox.baseVal.width,
          width: box.width,
          fontPx: parseFloat(getComputedStyle(svg.querySelector('text')).fontSize),
          labelHeights: [...svg.querySelectorAll('text')].map((t) => rect(t).height),
          ticks: [...svg.querySelectorAll('text[text-anchor=middle]')].map(rect),
        };
      })()`)) as { scale: number; width: number; fontPx: number; labelHeights: number[]; ticks: { left: number; right: number }[] };
      expect(m.width).toBeLessThanOrEqual(390);
      expect(m.scale).toBeGreaterThan(0.95);
      expect(m.fontPx).toBeGreaterThanOrEqual(12);
      expect(Math.min(...m.labelHeights)).toBeGreaterThanOrEqual(11);
      // Hour ticks do not overlap.
      for (let i = 1; i < m.ticks.length; i++) expect(m.ticks[i]!.left).toBeGreaterThan(m.ticks[i - 1]!.right);
      await shot(page, 'user-phone');
      expect(errors).toEqual([]);
    });
  });
}
