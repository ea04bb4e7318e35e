import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpProblem } from '../../src/server/problems.js';
import { removeStaleCheckCopies, STALE_CHECK_COPY_MS, UNTRUSTED_FILE_CHECK_DEFAULTS, UntrustedFileChecks } from '../../src/server/untrustedFileCheck.js';
import { buildGadgetbridgeExport } from '../fixtures/device-c/buildGadgetbridgeExport.js';
import { buildHealthConnectZip } from '../fixtures/health-connect/buildHealthConnectExport.js';

/**
 * contracts §12, §18, issue 34 §1: a stranger's SQLite file is opened at the request only in a
 * child process that is killed at a deadline (a worker thread cannot be stopped inside SQLite), a
 * bounded number at once, and the plaintext copy of a Health Connect database is removed however
 * the process ended.
 */
let tmp: string;
const savedTmp = process.env.TMPDIR;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'untrusted-check-'));
  // os.tmpdir() reads TMPDIR on every call: the check's private copies land here, where the test can see them.
  process.env.TMPDIR = tmp;
});
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(tmp, { recursive: true, force: true });
});

const checks = (options: Partial<typeof UNTRUSTED_FILE_CHECK_DEFAULTS> = {}) => new UntrustedFileChecks({ ...UNTRUSTED_FILE_CHECK_DEFAULTS, ...options });
/** The check's private directories (tsx keeps its own cache in TMPDIR too). */
const copies = () => readdirSync(tmp).filter((n) => n.startsWith('wellstream-check-'));
const rejection = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe('request-time checks of a stranger\'s SQLite file run in a process that can be stopped (contracts §12, §18, issue 34 §1)', { timeout: 60_000 }, () => {
  it('passes the real formats (a Gadgetbridge database, a Health Connect zip), and removes the Health Connect copy', async () => {
    const c = checks();
    expect(await c.check('device-c', buildGadgetbridgeExport())).toBeNull();
    expect(await c.check('health-connect', await buildHealthConnectZip())).toBeNull();
    expect(copies()).toEqual([]);
  });

  it("answers the reason a file is refused, from the checker's process (a zip without the database)", async () => {
    const { zipEntries } = await import('../fixtures/zip/buildZip.js');
    const reason = await checks().check('health-connect', await zipEntries([{ name: 'notes.txt', data: Buffer.from('hello') }]));
    expect(reason).toMatch(/holds no health_connect_export\.db/);
  });

  it('contracts §18: a check that outlives its deadline is answered 422, its process killed and its private copy removed', async () => {
    const err = await rejection(checks({ deadlineMs: 1 }).check('health-connect', await buildHealthConnectZip()));
    expect(err).toBeInstanceOf(HttpProblem);
    expect((err as HttpProblem).status).toBe(422);
    expect((err as HttpProblem).detail).toMatch(/could not be checked within 0\.001 s/);
    expect(copies()).toEqual([]);
  });

  it('contracts §18: a checker stuck inside SQLite (a statement that never ends) is killed at the deadline: 422, and the check ends with its process', async () => {
    // The deadline leaves the process time to start (tsx from source) and enter the statement.
    const stuck = checks({ deadlineMs: 8_000, entry: new URL('../fixtures/sqlite/stuckChecker.ts', import.meta.url) });
    const err = await rejection(stuck.check('health-connect', await buildHealthConnectZip()));
    expect((err as HttpProblem).status).toBe(422);
    expect((err as HttpProblem).detail).toMatch(/could not be checked within 8 s/);
    expect(existsSync(join(tmp, 'stuck-checker-started'))).toBe(true);
    expect(copies()).toEqual([]);
  });

  it('runs at most maxRunning checks, lets maxWaiting wait, and answers 429 with Retry-After beyond both', async () => {
    const c = checks({ maxRunning: 1, maxWaiting: 1 });
    const file = buildGadgetbridgeExport();
    const running = c.check('device-c', file);
    const waiting = c.check('device-c', file);
    const beyond = await rejection(c.check('device-c', file));
    expect(beyond).toBeInstanceOf(HttpProblem);
    expect((beyond as HttpProblem).status).toBe(429);
    expect((beyond as HttpProblem).headers['retry-after']).toBe('5');
    expect(await running).toBeNull();
    expect(await waiting).toBeNull();
    // The slots were given back: a later check runs.
    expect(await c.check('device-c', file)).toBeNull();
  });

  it("contracts §18, issue 34 §7: a check's copy left by a service that stopped within the check is removed by the next process's first check; a live check's copy is left alone", async () => {
    const left = join(tmp, 'wellstream-check-left');
    mkdirSync(left);
    writeFileSync(join(left, 'health_connect_export.db'), 'plaintext of someone');
    const stale = (Date.now() - STALE_CHECK_COPY_MS - 60_000) / 1000;
    utimesSync(left, stale, stale);
    const live = join(tmp, 'wellstream-check-live');
    mkdirSync(live);
    const other = join(tmp, 'someone-else');
    mkdirSync(other);
    utimesSync(other, stale, stale);

    expect(await checks().check('health-connect', await buildHealthConnectZip())).toBeNull();
    expect(existsSync(left)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
    expect(await removeStaleCheckCopies(tmp, Date.now() + STALE_CHECK_COPY_MS + 60_000)).toBe(1);
    expect(existsSync(live)).toBe(false);
  });
});
