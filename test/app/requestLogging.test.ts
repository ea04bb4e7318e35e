import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/app/logger.js';
import { startTestApp, type TestApp } from '../support/server.js';

/**
 * Standards: "secrets are stored hashed or sealed, never logged". Some secrets travel in URLs
 * (Garmin's inbound secret, Strava's and Withings' webhook tokens, connect-session links, an OAuth
 * start address's state, a callback's code and state), so request logs carry the matched route, never the URL.
 */
const lines: string[] = [];
let t: TestApp;
beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  t = await startTestApp({}, { log: createLogger('info', sink) });
});
afterAll(async () => {
  await t?.close();
});

describe('request logs (Standards: secrets never logged)', () => {
  it('name the method and the matched route, never the path or query a request came with', async () => {
    const secrets = ['GARMINSECRET0123456789', 'STRAVATOKEN0123456789', 'CONNECTLINK0123456789', 'OAUTHCODE0123456789', 'OAUTHSTATE0123456789', 'UNROUTED0123456789', 'STARTSTATE0123456789'];
    await t.call('POST', `/inbound/garmin/${secrets[0]}`, { body: {} });
    await t.call('GET', `/webhooks/strava/${secrets[1]}`, { query: { 'hub.challenge': 'x' } });
    await t.call('GET', `/connect/${secrets[2]}`);
    await t.call('GET', '/oauth/oura/callback', { query: { code: secrets[3]!, state: secrets[4]! } });
    await t.call('GET', `/nowhere/${secrets[5]}`);
    await t.call('GET', '/oauth/oura/authorize', { query: { state: secrets[6]! } });
    const log = lines.join('');
    expect(log).toContain('"route":"/inbound/:provider/:secret"');
    expect(log).toContain('"route":"(no route)"');
    for (const s of secrets) expect(log).not.toContain(s);
  });

  it('write one line per answered request, with its id, method, route, status and time, and no credential', async () => {
    const secret = 'svc_sk_' + 'A'.repeat(43);
    lines.length = 0;
    const res = await t.call('GET', '/v1/users/00000000-0000-4000-8000-000000000000', { key: secret, headers: { 'x-request-id': 'line-1' } });
    expect(res.statusCode).toBe(401);
    const written = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === 'line-1');
    expect(written).toEqual([
      expect.objectContaining({ level: 30, msg: 'request completed', req: { method: 'GET', route: '/v1/users/:id' }, res: { statusCode: 401 }, responseTime: expect.any(Number) }),
    ]);
    expect(lines.join('')).not.toContain(secret);
  });
});
