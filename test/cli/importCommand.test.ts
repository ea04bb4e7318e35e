import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { describeError, type OpenContext } from '../../src/cli/shared.js';
import { buildHealthConnectZip } from '../fixtures/health-connect/buildHealthConnectExport.js';
import { zipEntries } from '../fixtures/zip/buildZip.js';
import { zipOf } from '../sources/files/apple-health/exportFixtures.js';
import { samsungCsv } from '../sources/files/samsung-health/samsungExport.js';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';
import { realdataPath } from '../sources/files/realdata.js';
import { runCli } from './cliProcess.js';

/**
 * Issue 36 §6 and contracts §17: `cli import` tells the format from the file, and every way it
 * can end says so in one line with exit 1 — an empty file, a format it cannot tell, an upload that
 * failed (with the outcome printed), a service it cannot reach, a service that stops while it
 * waits for the outcome — never a stack. The command runs in this process on the test service's
 * context (as `npm run cli` would on its store); one case runs it as the process a shell starts.
 */
let t: TestApp;
let tenant: TenantHandle;
let origin: string;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  tenant = await t.createTenant('cli-import');
  dir = tempDir('wellstream-cli-import-');
});
afterAll(async () => t?.close());
afterEach(() => vi.restoreAllMocks());

// The CLI closes its context when done; the test service's context must stay open.
const open: OpenContext = async () => ({ ...t.ctx, close: async () => {} });

type Run = { code: number; stdout: string; stderr: string; error: { message: string; expected: boolean } | null };

/** `npm run cli -- import …` in this process: its output, its exit code, and how main.ts would print its error. */
async function cliImport(...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((stderr += String(s)), true));
  const before = process.exitCode;
  process.exitCode = undefined;
  let error: Run['error'] = null;
  try {
    await buildProgram(open).exitOverride().parseAsync(['node', 'cli', 'import', ...args]);
  } catch (err) {
    error = describeError(err);
  } finally {
    vi.mocked(process.stdout.write).mockRestore();
    vi.mocked(process.stderr.write).mockRestore();
  }
  const code = error ? 1 : Number(process.exitCode ?? 0);
  process.exitCode = before;
  return { code, stdout, stderr, error };
}

let users = 0;
async function userRef(): Promise<string> {
  const ref = `cli-user-${++users}`;
  await t.createUser(tenant.apiKey, { external_ref: ref });
  return ref;
}
function file(name: string, body: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}
/** An address nothing listens at: a port taken and let go. */
async function closedOrigin(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}
const samsungZip = () =>
  zipEntries([samsungCsv('com.samsung.health.weight', ['weight', 'start_time', 'time_offset', 'deviceuuid', 'pkg_name', 'datauuid'], [[70.5, '2025-01-01 08:00:00.000', 'UTC+0100', 'd1', 'com.sec.android.app.shealth', 'u1']])]);
const APPLE_ZIP = fileURLToPath(new URL('../fixtures/apple-health/export.zip', import.meta.url));

describe('cli import: the format from the file, and one line with exit 1 for every way it ends badly (issue 36 §6, contracts §17)', { timeout: 120_000 }, () => {
  it('without --provider, the Apple fixture is told as apple-health and imported: done, exit 0', async () => {
    const run = await cliImport(APPLE_ZIP, '--user', await userRef(), '--url', origin);
    expect(run.error).toBeNull();
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('format: apple-health (told from the file');
    const upload = JSON.parse(run.stdout.trim()) as { provider: string; status: string; records: Record<string, number> };
    expect(upload).toMatchObject({ provider: 'apple-health', status: 'done' });
    expect(Object.values(upload.records).reduce((a, n) => a + n, 0)).toBeGreaterThan(1000);
  });

  it('without --provider, a Samsung Health zip and a Health Connect zip go as their own formats (before: apple-health, the default)', async () => {
    for (const [name, body, slug] of [['samsung.zip', await samsungZip(), 'samsung-health'], ['hc.zip', await buildHealthConnectZip(), 'health-connect']] as const) {
      const run = await cliImport(file(name, body), '--user', await userRef(), '--url', origin);
      expect(run.error, run.stderr).toBeNull();
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ provider: slug, status: 'done' });
    }
  });

  it('a small import’s progress lines read its size in B or KiB, never "0.0 MiB / 0.0 MiB" (issue 36 §8)', async () => {
    const zip = await samsungZip();
    const run = await cliImport(file('small-samsung.zip', zip), '--user', await userRef(), '--url', origin);
    expect(run.error, run.stderr).toBeNull();
    const bars = run.stderr.split('\n').filter((l) => l.startsWith('upload ') || l.startsWith('records '));
    expect(bars.length).toBeGreaterThan(0);
    // A zip of one Samsung file is a few hundred bytes: counted in bytes.
    expect(zip.length).toBeLessThan(1024);
    expect(bars.filter((l) => l.startsWith('upload ')).at(-1)).toMatch(new RegExp(`100% ${zip.length} B / ${zip.length} B$`));
    for (const line of bars) expect(line).not.toContain('0.0 MiB');
  });

  const fitRun = realdataPath('fit', 'garmin-fenix-5-run.fit');
  it.skipIf(!fitRun)('without --provider, a .fit file goes as fit, told from its header (issue 39)', async () => {
    const run = await cliImport(file('run.fit', readFileSync(fitRun!)), '--user', await userRef(), '--url', origin);
    expect(run.error, run.stderr).toBeNull();
    expect(run.stderr).toContain('format: fit (told from the file');
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ provider: 'fit', status: 'done', records: { workout: 1 } });
  });

  it('an empty file: "… is empty: nothing to upload", exit 1, nothing sent', async () => {
    const path = file('empty.zip', '');
    const run = await cliImport(path, '--user', await userRef(), '--url', origin, '--provider', 'apple-health');
    expect(run.error).toEqual({ message: `${path} is empty: nothing to upload`, expected: true });
    expect(run.stdout).toBe('');
  });

  it('a file whose format cannot be told: names --provider and the slugs', async () => {
    const path = file('notes.zip', await zipOf({ 'notes.txt': 'hello' }));
    const run = await cliImport(path, '--user', await userRef(), '--url', origin);
    expect(run.error?.expected).toBe(true);
    expect(run.error?.message).toMatch(new RegExp(`^cannot tell the format of ${path}: .*it holds notes\\.txt; name it with --provider \\(one of apple-health, health-connect, fitbit-takeout, samsung-health`));
  });

  it('an upload that ends failed (a zip of unrelated files sent as apple-health): the outcome printed, the reason on stderr, exit 1', async () => {
    const path = file('photos.zip', await zipOf({ 'photos/beach.jpg': Buffer.alloc(5000, 3) }));
    const run = await cliImport(path, '--user', await userRef(), '--url', origin, '--provider', 'apple-health');
    expect(run.error).toBeNull();
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ status: 'failed', error: expect.stringMatching(/the archive holds no export\.xml/) });
    expect(run.stderr).toMatch(/the upload ended failed: archive: not an Apple Health export/);
  });

  it('issue 36 §7: without --url it reaches the service at WELLSTREAM_URL (what the demo block exports), and names that address when nothing answers there', async () => {
    vi.stubEnv('WELLSTREAM_URL', `${origin}/`);
    try {
      const run = await cliImport(file('via-env.zip', await samsungZip()), '--user', await userRef());
      expect(run.error, run.stderr).toBeNull();
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ provider: 'samsung-health', status: 'done' });
      const nowhere = await closedOrigin();
      vi.stubEnv('WELLSTREAM_URL', nowhere);
      const refused = await cliImport(APPLE_ZIP, '--user', await userRef());
      expect(refused.error?.message).toMatch(new RegExp(`^cannot reach the service at ${nowhere}: connect ECONNREFUSED`));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a service that cannot be reached: "cannot reach the service at <url>: …; is it running?"', async () => {
    const nowhere = await closedOrigin();
    const run = await cliImport(APPLE_ZIP, '--user', await userRef(), '--url', nowhere);
    expect(run.error?.expected).toBe(true);
    expect(run.error?.message).toMatch(new RegExp(`^cannot reach the service at ${nowhere}: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+; is it running\\? set --url or WELLSTREAM_URL$`));
  });

  it('a service that stops after the last byte is stored: "the upload is stored and will be processed when it starts again"; the same command then prints the outcome', async () => {
    const ref = await userRef();
    const path = file('stops.zip', await samsungZip());
    // The service stops answering once the upload is complete: every read of the outcome meets a refused connection, as from a stopped process.
    const nowhere = await closedOrigin();
    const refused = await fetch(nowhere).catch((e: unknown) => e);
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (...args: Parameters<typeof fetch>) => {
      if (String(args[0]).includes('/v1/me/uploads/')) throw refused;
      return realFetch(...args);
    });
    const stopped = await cliImport(path, '--user', ref, '--url', origin);
    expect(stopped.error?.expected).toBe(true);
    expect(stopped.error?.message).toMatch(new RegExp(`^the service at ${origin} stopped \\(connect ECONNREFUSED [^)]*\\); the upload is stored and will be processed when it starts again; run the same command to see its outcome$`));
    vi.restoreAllMocks();
    const again = await cliImport(path, '--user', ref, '--url', origin);
    expect(again.error, again.stderr).toBeNull();
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ provider: 'samsung-health', status: 'done' });
  });

  it('--tz names the zone of a Fitbit Takeout without a profile zone: 08:01 local in Europe/Berlin is stored as 06:01 UTC (contracts §17)', async () => {
    const ref = `cli-tz-${++users}`;
    const user = await t.createUser(tenant.apiKey, { external_ref: ref });
    const path = file('takeout-no-profile.zip', await zipEntries([{ name: 'Takeout/Fitbit/Global Export Data/steps-2024-07-01.json', data: Buffer.from(JSON.stringify([{ dateTime: '07/01/24 08:01:00', value: '95' }])) }]));
    const run = await cliImport(path, '--user', ref, '--url', origin, '--tz', 'Europe/Berlin');
    expect(run.error, run.stderr).toBeNull();
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ provider: 'fitbit-takeout', status: 'done' });
    const steps = (await t.call('GET', `/v1/users/${user.id}/samples?type=step_count&view=all&start=2024-06-30T00:00:00Z&end=2024-07-03T00:00:00Z`, { key: tenant.apiKey })).json().data as { start_date: string; metadata: Record<string, unknown> }[];
    expect(steps.map((s) => s.start_date)).toEqual(['2024-07-01T06:01:00.000Z']);
    expect(steps[0]!.metadata).toMatchObject({ timezone: 'Europe/Berlin', timezone_source: 'upload' });
  });

  it('without --provider, a Dexcom Clarity CSV is told as dexcom-clarity and imported with --tz: done, exit 0 (contracts §17)', async () => {
    const path = file('clarity.csv', 'Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (mg/dL),Insulin Value (u),Carb Value (grams),Duration (hh:mm:ss),Glucose Rate of Change (mg/dL/min),Transmitter Time (Long Integer)\n1,2024-01-15 07:30:00,EGV,,,,iPhone G6,101,,,,,100\n');
    const run = await cliImport(path, '--user', await userRef(), '--url', origin, '--tz', 'Europe/Berlin');
    expect(run.error, run.stderr).toBeNull();
    expect(run.stderr).toContain('format: dexcom-clarity (told from the file');
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ provider: 'dexcom-clarity', status: 'done', records: { quantity: 1 } });
  });

  it('--tz with a zone that is not one: one line naming it, exit 1, nothing uploaded', async () => {
    const path = file('tz-unknown.zip', await samsungZip());
    const run = await cliImport(path, '--user', await userRef(), '--url', origin, '--tz', 'Mars/Olympus');
    expect(run.code).toBe(1);
    expect(run.error).toEqual({ message: '--tz must be an IANA time zone such as Europe/Berlin; "Mars/Olympus" is not one', expected: true });
  });

  it('as a process: an empty file is one line on stderr and exit 1, no stack', async () => {
    const path = file('empty-process.zip', '');
    const run = await runCli(t.dataDir, 'import', path, '--user', 'nobody', '--url', origin);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: ${path} is empty: nothing to upload\n`);
  });
});
