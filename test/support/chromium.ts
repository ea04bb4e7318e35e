import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * The browser tests' one way to a headless Chromium: the system's own (Debian `chromium`), never a
 * downloaded one. Detected once; where it is missing the browser tests skip with one line.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM_PATH);
export const chromiumMissing = `skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** Flags for a quiet, offline, sandbox-less headless run (containers run as root). Playwright gives each launch a fresh profile directory. */
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ARGS });
}

/** A page whose script errors and failed requests (status, method, path) land in `errors` for the test to check. */
export async function openPage(browser: Browser, viewport = { width: 1280, height: 800 }): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  // A wait that never ends fails with the step's name, well before the test's own time-out.
  page.setDefaultTimeout(20_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // Failed loads are reported below with their address instead.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    // A browser asks every site for /favicon.ico by itself; that miss is no page's fault.
    if (r.status() >= 400 && new URL(r.url()).pathname !== '/favicon.ico') errors.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return { page, errors };
}

/** A port free right now on the loopback (for a service whose public address must be known before it listens). */
export { freePort } from '../../bench/support/service.js';
