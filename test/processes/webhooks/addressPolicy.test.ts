import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressRange, checkAddress, ForbiddenAddressError } from '../../../src/shared/addressPolicy.js';
import { guardedAgent } from '../../../src/shared/guardedAgent.js';
import { PRIVATE_TARGETS_HINT } from '../../../commands/webhooks/webhookFields.js';
import { postDelivery } from '../../../src/processes/webhooks/httpSender.js';
import { expectProblem, expectStatus, startTestApp, type TestApp } from '../../support/server.js';
import { eventually, Receiver } from '../../webhooks/receiver.js';

/**
 * SSRF guard (issue 9 "Safety"; contracts §1 webhook targets). No test here ever dials anything
 * but 127.0.0.1: public addresses are only classified, never connected to.
 */
describe('address ranges refused without WEBHOOK_ALLOW_PRIVATE_TARGETS', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    ['[::1]', 'loopback'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(() => checkAddress(address, false)).toThrow(ForbiddenAddressError);
    expect(() => checkAddress(address, true)).not.toThrow();
  });

  it.each(['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows the public address %s', (address) => {
    expect(addressRange(address)).toBe('unicast');
    expect(() => checkAddress(address, false)).not.toThrow();
  });

  it('refuses what is not an IP address at all', () => {
    expect(() => checkAddress('', false)).toThrow(ForbiddenAddressError);
    expect(() => checkAddress('example.com', false)).toThrow(ForbiddenAddressError);
  });
});

describe('the delivery agent checks the address it connects to', () => {
  let r: Receiver;
  beforeAll(async () => {
    r = await Receiver.start();
  });
  afterAll(async () => {
    await r.close();
  });

  it.each([
    ['an IPv4 literal', (port: number) => `http://127.0.0.1:${port}/x`],
    ['a name that resolves to loopback', (port: number) => `http://localhost:${port}/x`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `http://[::ffff:127.0.0.1]:${port}/x`],
  ])('refuses %s without sending a byte', async (_what, url) => {
    const agent = guardedAgent({ allowPrivateTargets: false, refusalHint: PRIVATE_TARGETS_HINT, connectTimeoutMs: 2000 });
    try {
      const before = r.received.length;
      const result = await postDelivery(agent, url(r.port), {}, '{}');
      expect(result).toMatchObject({ ok: false, statusCode: null });
      expect(result.error).toMatch(/not allowed/);
      expect(r.received.length).toBe(before);
    } finally {
      await agent.close();
    }
  });

  it('connects to loopback when WEBHOOK_ALLOW_PRIVATE_TARGETS is on', async () => {
    const agent = guardedAgent({ allowPrivateTargets: true, refusalHint: PRIVATE_TARGETS_HINT, connectTimeoutMs: 2000 });
    try {
      const result = await postDelivery(agent, r.url('/allowed'), {}, '{}');
      expect(result).toMatchObject({ ok: true, statusCode: 204 });
      expect(r.at('/allowed')).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });
});

describe('the service without WEBHOOK_ALLOW_PRIVATE_TARGETS (contracts §1)', () => {
  let t: TestApp;
  let r: Receiver;
  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_RETRY_SCHEDULE: '0,3600,3600,3600,3600,3600,3600,3600' });
    r = await Receiver.start();
  });
  afterAll(async () => {
    await t?.close();
    await r?.close();
  });

  it.each(['http://127.0.0.1:8080/hook', 'http://10.0.0.8/hook', 'http://[::1]:8080/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://169.254.169.254/latest'])(
    'answers 400 to an endpoint at the private literal %s, on create and on update',
    async (url) => {
      const tenant = await t.createTenant();
      expectProblem(await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url } }), 400);
      const ok = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: 'https://hooks.example.com/in' } });
      expectStatus(ok, 201);
      expectProblem(await t.call('PATCH', `/v1/webhooks/${ok.json().id}`, { key: tenant.apiKey, body: { url } }), 400);
      expect((await t.call('GET', `/v1/webhooks/${ok.json().id}`, { key: tenant.apiKey })).json()).toMatchObject({ url: 'https://hooks.example.com/in' });
    },
  );

  it('fails the attempt to a name resolving to loopback, and the receiver gets nothing', async () => {
    const tenant = await t.createTenant();
    const created = await t.call('POST', '/v1/webhooks', { key: tenant.apiKey, body: { url: `http://localhost:${r.port}/ssrf` } });
    expectStatus(created, 201);
    const id = created.json().id as string;
    const test = await t.call('POST', `/v1/webhooks/${id}/test`, { key: tenant.apiKey });
    expectStatus(test, 202);
    const attempted = await eventually(async () => {
      const d = (await t.call('GET', `/v1/webhooks/${id}/deliveries/${test.json().id}`, { key: tenant.apiKey })).json() as { attempts: number; last_error: string | null };
      return d.attempts >= 1 ? d : null;
    });
    expect(attempted.last_error).toMatch(/not allowed/);
    expect(r.at('/ssrf')).toHaveLength(0);
  });
});
