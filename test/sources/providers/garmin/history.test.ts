import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKFILL_PATH, requestGarminHistory } from '../../../../src/sources/providers/garmin/history.js';
import { GARMIN_ORIGINS } from '../../../../src/sources/providers/garmin/userId.js';
import { garmin } from '../../../../src/sources/providers/garmin/provider.js';
import { providerHttp } from '../../../../src/sources/shared/providerHttp.js';
import type { PullContext } from '../../../../src/sources/shared/pullConnector.js';
import { startSandbox, type Sandbox } from '../../../../src/sandbox/sandboxServer.js';
import { sandboxGrant } from '../../shared/sandboxPull.js';

/**
 * Garmin's history on connect (issue 11 "backfill (on connect)" for a push provider): the backfill
 * run asks Garmin's Backfill API for the window, at most 90 days a request, and Garmin pushes it
 * later to the registered address.
 */
let sandbox: Sandbox;
let token: string;
const asked: string[] = [];
beforeAll(async () => {
  sandbox = await startSandbox();
  token = (await sandboxGrant(sandbox, { descriptor: garmin })).accessToken;
});
afterAll(async () => {
  await sandbox?.close();
});

function context(window: { start: Date; end: Date }, dataType: string | null = null): PullContext {
  const http = providerHttp({ provider: garmin, baseUrl: sandbox.urls.garmin, origins: GARMIN_ORIGINS, accessToken: () => token });
  return {
    window,
    trigger: 'backfill',
    dataType,
    providerUserId: null,
    scopes: [],
    signal: new AbortController().signal,
    http: async (r) => {
      asked.push(`${r.path}?${r.query?.summaryStartTimeInSeconds}-${r.query?.summaryEndTimeInSeconds}`);
      return http(r);
    },
  };
}

describe('Garmin history requests (Backfill API)', () => {
  it('asks for every summary type in spans of at most 90 days; a span asked for again (409) counts as asked', async () => {
    asked.length = 0;
    const window = { start: new Date('2026-05-01T00:00:00Z'), end: new Date('2026-09-01T00:00:00Z') };
    await requestGarminHistory(context(window));
    const types = Object.keys(BACKFILL_PATH).length;
    expect(asked).toHaveLength(types * 2);
    for (const a of asked) {
      const [from, to] = a.split('?')[1]!.split('-').map(Number) as [number, number];
      expect(to - from).toBeLessThanOrEqual(90 * 86_400);
    }
    // A retried run asks the same spans: Garmin answers 409, and the run goes on.
    await expect(requestGarminHistory(context(window))).resolves.toBeUndefined();
  });

  it('a notification naming one summary type asks for that one only', async () => {
    asked.length = 0;
    await requestGarminHistory(context({ start: new Date('2026-10-01T00:00:00Z'), end: new Date('2026-10-02T00:00:00Z') }, 'sleeps'));
    expect(asked).toEqual([`${BACKFILL_PATH.sleeps}?${Date.parse('2026-10-01T00:00:00Z') / 1000}-${Date.parse('2026-10-02T00:00:00Z') / 1000}`]);
  });

  it('a refused grant surfaces as refused, as a pull’s would', async () => {
    sandbox.failures.fail('garmin', 'invalid_grant');
    await expect(requestGarminHistory(context({ start: new Date('2026-10-03T00:00:00Z'), end: new Date('2026-10-04T00:00:00Z') }))).rejects.toMatchObject({ kind: 'refused' });
  });
});
