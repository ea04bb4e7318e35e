import { describe, expect, it } from 'vitest';
import { fitbit } from '../../../src/sources/providers/fitbit/provider.js';
import { PROVIDER_ANSWER_MAX_BYTES } from '../../../src/sources/shared/providerFetch.js';
import { providerHttp } from '../../../src/sources/shared/providerHttp.js';
import { json, providerAndOtherHost, refusal } from './fakeProvider.js';

/**
 * Issue 20, finding 3 ("token exfiltration by a provider answer"): every provider call goes to
 * one of the provider's documented origins or to its configured `<SLUG>_BASE_URL` (contracts §7),
 * through the SSRF guard webhook deliveries use, without following redirects, and its answer is
 * capped while it streams. Every server here is on 127.0.0.1; public origins are only named.
 */
const hosts = providerAndOtherHost((_r, res) => json(res, 200, { ok: true }));

/** The client a connector gets, counting how often it asked for the user's token. */
function client(o: { baseUrl?: string; origins?: Record<string, string>; timeoutMs?: number } = {}) {
  const asked = { token: 0 };
  const http = providerHttp({
    provider: fitbit,
    baseUrl: 'baseUrl' in o ? o.baseUrl : hosts.provider.origin,
    origins: o.origins ?? { data: 'https://api.fitbit.com' },
    accessToken: () => {
      asked.token++;
      return 'users-secret-token';
    },
    timeoutMs: o.timeoutMs ?? 10_000,
  });
  return { http, asked };
}

describe('links from a provider answer are followed on its own origins only (issue 20, finding 3)', () => {
  it.each([
    ['another host’s port on the same address', () => `${hosts.other.origin}/1/user/-/activities/list.json?offset=100`],
    ['user-info that makes the host another one', () => `https://api.fitbit.com@127.0.0.1:${hosts.other.port}/1/user/-/activities/list.json`],
    ['a public host the provider does not document', () => 'https://collector.example.net/1/user/-/activities/list.json'],
    ['plain http for the documented https origin', () => 'http://api.fitbit.com/1/user/-/activities/list.json'],
    ['a relative link', () => '/1/user/-/activities/list.json'],
    ['another scheme', () => 'file:///etc/passwd'],
  ])('refuses %s as rejected, before asking for the token, and nothing is sent there', async (_what, link) => {
    const { http, asked } = client();
    const err = await refusal(http({ path: '/1/user/-/activities/list.json', url: link() }));
    expect(err.kind).toBe('rejected');
    expect(err.message).toMatch(/Fitbit .*(not one of its documented addresses|not an absolute address)/);
    expect(asked.token).toBe(0);
    expect(hosts.other.seen).toHaveLength(0);
    expect(hosts.provider.seen).toHaveLength(0);
  });

  it('refuses the same links when no base URL is configured (the documented origin alone)', async () => {
    const { http, asked } = client({ baseUrl: undefined });
    const err = await refusal(http({ path: '/x', url: `${hosts.other.origin}/1/user/-/activities/list.json` }));
    expect(err).toMatchObject({ kind: 'rejected' });
    expect(err.message).toContain(`http://127.0.0.1:${hosts.other.port}`);
    expect(asked.token).toBe(0);
    expect(hosts.other.seen).toHaveLength(0);
  });

  it('follows a link on the documented origin at the configured base URL, keeping its path and query, without user-info', async () => {
    const { http } = client();
    const res = await http({ path: '/1/user/-/activities/list.json', url: 'https://someone:pw@api.fitbit.com/1/user/-/activities/list.json?offset=100&limit=100#frag' });
    expect(res.status).toBe(200);
    expect(hosts.provider.seen).toEqual([expect.objectContaining({ method: 'GET', path: '/1/user/-/activities/list.json?offset=100&limit=100' })]);
    expect(hosts.provider.seen[0]!.headers.authorization).toBe('Bearer users-secret-token');
  });

  it('follows a link already on the configured base URL', async () => {
    const { http } = client();
    expect((await http({ path: '/x', url: `${hosts.provider.origin}/1/next?page=2` })).status).toBe(200);
    expect(hosts.provider.seen.map((s) => s.path)).toEqual(['/1/next?page=2']);
  });

  it('keeps a documented path on the origin even when it reads as another host (`//host/…`)', async () => {
    const { http, asked } = client();
    const err = await refusal(http({ path: `//127.0.0.1:${hosts.other.port}/steal` }));
    expect(err.kind).toBe('rejected');
    expect(asked.token).toBe(0);
    expect(hosts.other.seen).toHaveLength(0);
  });

  it('does not follow a redirect: a 3xx to another host is rejected and that host receives nothing', async () => {
    hosts.answer = (_r, res) => {
      res.writeHead(307, { location: `${hosts.other.origin}/collect` });
      res.end();
    };
    const { http } = client();
    const err = await refusal(http({ path: '/1/user/-/profile.json' }));
    expect(err).toMatchObject({ kind: 'rejected', status: 307 });
    expect(hosts.provider.seen).toHaveLength(1);
    expect(hosts.other.seen).toHaveLength(0);
  });
});

describe('the SSRF guard of webhook deliveries guards provider calls (issue 20)', () => {
  it.each([
    ['a loopback literal', () => hosts.provider.origin],
    ['a name resolving to loopback', () => `http://localhost:${hosts.provider.port}`],
  ])('refuses a documented origin at %s without FITBIT_BASE_URL, sending nothing', async (_what, origin) => {
    const { http } = client({ baseUrl: undefined, origins: { data: origin() } });
    const err = await refusal(http({ path: '/1/user/-/profile.json' }));
    expect(err.kind).toBe('rejected');
    expect(err.message).toMatch(/Fitbit resolves to (127\.0\.0\.1|::1) \(loopback\); not called: .*FITBIT_BASE_URL/);
    expect(hosts.provider.seen).toHaveLength(0);
  });

  it('calls the same address when FITBIT_BASE_URL names it (the operator chose that host)', async () => {
    const { http } = client({ baseUrl: hosts.provider.origin, origins: { data: hosts.provider.origin } });
    expect((await http({ path: '/1/user/-/profile.json' })).status).toBe(200);
    expect(hosts.provider.seen).toHaveLength(1);
  });
});

describe('provider answers are capped while they stream (issue 20)', () => {
  it('drops an endless answer once it passes 32 MiB, without reading the rest: the call is rejected with the cap', async () => {
    let done: Promise<number> = Promise.resolve(0);
    hosts.answer = (_r, res, f) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      done = f.streamForever(res);
    };
    const { http } = client();
    const err = await refusal(http({ path: '/1/user/-/activities/heart/date/2026-11-16/1d/1sec.json' }));
    expect(err.kind).toBe('rejected');
    expect(err.message).toMatch(/answered more than 32 MiB; the answer was dropped while it streamed/);
    // The server stops when the connection closes: it wrote the cap plus what socket buffers hold, not more.
    const written = await done;
    expect(written).toBeGreaterThan(PROVIDER_ANSWER_MAX_BYTES);
    expect(written).toBeLessThan(PROVIDER_ANSWER_MAX_BYTES + 16 * 1024 * 1024);
  });

  it('refuses an answer whose Content-Length is over the cap before reading its body', async () => {
    let closed: Promise<void> = Promise.resolve();
    hosts.answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024) });
      res.write('{"activities":[');
      closed = new Promise((resolve) => res.on('close', () => resolve()));
    };
    const { http } = client();
    const err = await refusal(http({ path: '/1/user/-/activities/list.json' }));
    expect(err.message).toMatch(/more than 32 MiB/);
    await closed;
  });

  it('cuts an answer that trickles in at the call’s time-out, body included (unavailable: retried later)', async () => {
    hosts.answer = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    };
    const { http } = client({ timeoutMs: 500 });
    const err = await refusal(http({ path: '/1/user/-/profile.json' }));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/time-out/);
  });

  it('keeps an answer under the cap whole', async () => {
    const big = { data: 'x'.repeat(5 * 1024 * 1024) };
    hosts.answer = (_r, res) => json(res, 200, big);
    const { http } = client();
    const res = await http({ path: '/big' });
    expect(res.json<typeof big>().data.length).toBe(big.data.length);
  });
});
