import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { consoleAssetsDir } from '../../src/server/routes/console.js';
import { SANDBOX_CLIENTS } from '../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { connectThroughSandbox } from '../connections/consentFlow.js';
import { postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { launchChromium } from '../support/chromium.js';
import { expectStatus, startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { eventually } from '../webhooks/receiver.js';

/**
 * One running service for the console's browser tests (docs/console.md "Tests"): a tenant, a
 * headless Chromium, and helpers to fill users, read the API and take the documentation's
 * screenshots (`CONSOLE_SCREENSHOTS=<dir>`).
 */
export type ConsoleService = {
  t: TestApp;
  tenant: TenantHandle;
  base: string;
  browser: Browser;
  api: <T>(path: string, query?: Record<string, string>, key?: string) => Promise<T>;
  close: () => Promise<void>;
};

export async function startConsoleService(opts: { oura?: boolean } = {}): Promise<ConsoleService & { sandbox: Sandbox | null }> {
  // A clean clone has built assets after `npm ci` (prepare); a checkout that skipped it builds here.
  if (!consoleAssetsDir()) execFileSync('npm', ['run', '-s', 'build:console'], { stdio: 'inherit' });
  const sandbox = opts.oura ? await startSandbox() : null;
  const env: Record<string, string> = { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
  if (sandbox) Object.assign(env, { OURA_BASE_URL: sandbox.urls.oura!, OURA_CLIENT_ID: SANDBOX_CLIENTS.oura!.id, OURA_CLIENT_SECRET: SANDBOX_CLIENTS.oura!.secret });
  // Pulls run when the test says (syncPolling off), so the sync runs the page shows stand still.
  const t = await startTestApp(env, { syncPolling: false });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await t.createTenant('console');
  const browser = await launchChromium();
  const api = async <T,>(path: string, query: Record<string, string> = {}, key = tenant.apiKey): Promise<T> => {
    const res = await t.call('GET', path, { key, query });
    expectStatus(res, 200);
    return res.json() as T;
  };
  return {
    t,
    tenant,
    base,
    browser,
    sandbox,
    api,
    close: async () => {
      await browser.close();
      await t.close();
      await sandbox?.close();
    },
  };
}

/** The demo tenant's generated user (`mix`: two sources of heart rate, sleep with phases, workouts), `days` ending yesterday. */
export async function demoUser(s: ConsoleService, days = 7): Promise<string> {
  const demo = await s.t.call('POST', `/v1/admin/tenants/${s.tenant.id}/demo-user`, { key: s.t.adminKey, body: { persona: 'mix', days } });
  expectStatus(demo, 200);
  const id = (demo.json() as { user: { id: string } }).user.id;
  await waitForEtl(s.t, s.tenant.apiKey, id);
  return id;
}

/** A user with one HealthKit upload (device-a) of the given NDJSON lines, stored to the end. */
export async function uploadUser(s: ConsoleService, externalRef: string, ndjson: string): Promise<string> {
  const user = await s.t.createUser(s.tenant.apiKey, { external_ref: externalRef });
  const token = await s.t.mintToken(s.tenant.apiKey, user.id, { scopes: ['upload'] });
  expectStatus(await postUpload(s.t, 'device-a', token.token, `console-${externalRef}`, requestFor('device-a', gzipSync(ndjson))), 202);
  await waitForEtl(s.t, s.tenant.apiKey, user.id);
  return user.id;
}

/** Connects Oura through the sandbox for a user and runs its backfill to the end. */
export async function connectOura(s: ConsoleService, userId: string): Promise<void> {
  expectStatus((await connectThroughSandbox(s.t, s.tenant.apiKey, userId, 'oura')).callback, 200);
  // The connection's reactor queues the backfill on its own time: wait for it, then run it out.
  await eventually(async () => {
    await s.t.ctx.settle();
    return (await s.api<{ data: unknown[] }>(`/v1/users/${userId}/sync-runs`)).data.length > 0;
  });
  for (let pass = 0; pass < 20 && (await s.t.ctx.sync.runDue()).length > 0; pass++) await s.t.ctx.settle();
  await s.t.ctx.settle();
  await waitForEtl(s.t, s.tenant.apiKey, userId);
}

const SOURCES = {
  watch: { source_name: 'Anna’s Apple Watch', source_bundle_id: 'com.apple.health.6F1D2A7B-1C3E-4B8A-9E55-0D2C9A4E7F10', device_model: 'Watch', product_type: 'Watch7,1' },
  ring: { source_name: 'Oura', source_bundle_id: 'com.ouraring.oura', device_model: 'Oura Ring', product_type: 'Ring' },
} as const;

/** HealthKit heart-rate lines (NDJSON), one per reading, from the watch or the ring. */
export function heartRateLines(readings: { at: number; bpm: number; from: keyof typeof SOURCES }[]): string {
  return readings
    .map((r, i) => {
      const at = new Date(r.at).toISOString();
      const uuid = `C0C0A000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
      return JSON.stringify({ kind: 'quantity', uuid, type: 'HKQuantityTypeIdentifierHeartRate', value: r.bpm, unit: 'count/min', start_date: at, end_date: at, ...SOURCES[r.from], was_user_entered: false });
    })
    .join('\n')
    .concat('\n');
}

export const DAY_MS = 86_400_000;
/** Midnight UTC of today, `n` days back. */
export const utcDay = (n = 0, now = Date.now()) => Math.floor(now / DAY_MS) * DAY_MS - n * DAY_MS;
export const isoDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

const SHOTS = process.env.CONSOLE_SCREENSHOTS;

/** Writes docs/console's image `name` when CONSOLE_SCREENSHOTS names a folder; keys shown once are masked. */
export async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true, mask: [page.locator('.once input')] });
}

/** Every "Loading …" of the page has given way to its answer. */
export async function settled(page: Page): Promise<void> {
  // Polled with evaluate (a DevTools call) rather than waitForFunction, whose polling evaluates its
  // predicate inside the page, which the console's Content-Security-Policy (no 'unsafe-eval') refuses.
  for (let i = 0; i < 600; i++) {
    const done = await page.evaluate(`![...document.querySelectorAll('[role=status]')].some((e) => e.textContent.startsWith('Loading')) && !!document.querySelector('main h1')`);
    if (done) return;
    await page.waitForTimeout(25);
  }
  throw new Error('the page kept showing "Loading …" for 15 s');
}
