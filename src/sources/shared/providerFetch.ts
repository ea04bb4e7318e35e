import { STATUS_CODES } from 'node:http';
import { request, type Agent, type Dispatcher } from 'undici';
import { ForbiddenAddressError } from '../../shared/addressPolicy.js';
import { guardedAgent } from '../../shared/guardedAgent.js';
import { PROVIDER_CALL_TIMEOUT_MS, ProviderCallError } from './providerCallError.js';
import type { ProviderOrigins } from './providerOrigins.js';
import { settingPrefix } from './providers.js';

/**
 * The most a provider answer may hold, read as it streams (issue 20): the largest documented
 * answers the connectors ask for are a day of Strava streams at one sample a second (about
 * 10 MB with every stream) and a Fitbit range of 30 nights of sleep stages (a few MB); 32 MiB
 * leaves room for the largest real account without letting one answer take the heap.
 */
export const PROVIDER_ANSWER_MAX_BYTES = 32 * 1024 * 1024;

export type ProviderCall = {
  provider: { slug: string; name: string };
  origins: ProviderOrigins;
  url: URL;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** The caller's own end (the sync run's lease); its abort is passed on as it is. */
  signal?: AbortSignal;
  timeoutMs?: number;
  maxBytes?: number;
};

export type ProviderReply = { status: number; statusText: string; headers: Headers; body: Buffer };

/** Pooled per process (one for public addresses, one for a configured base URL), as fetch's own agent was. */
const agents = new Map<boolean, Agent>();

function agentFor(allowPrivate: boolean): Dispatcher {
  let agent = agents.get(allowPrivate);
  if (!agent) {
    agent = guardedAgent({ allowPrivateTargets: allowPrivate, refusalHint: 'the provider’s <SLUG>_BASE_URL is not set', connectTimeoutMs: 10_000 });
    agents.set(allowPrivate, agent);
  }
  return agent;
}

/**
 * One call to a provider, the only way the service sends a provider anything (data API, token,
 * revocation). The address must be on one of the provider's origins (ProviderOrigins); it is
 * dialled through the SSRF guard shared with webhook deliveries, which allows private, loopback
 * and link-local addresses only when `<SLUG>_BASE_URL` names the host; redirects are not
 * followed (the answer comes back as it is, a 3xx failing the call); the answer is read up to
 * `maxBytes` and the connection dropped beyond; the whole call, answer included, within the
 * time-out. Refusals are ProviderCallErrors: `rejected` for an address refused or an answer too
 * large (asking again gets the same), `unavailable` for no answer in time or a failed connection.
 */
export async function callProvider(c: ProviderCall): Promise<ProviderReply> {
  c.origins.check(c.url);
  const maxBytes = c.maxBytes ?? PROVIDER_ANSWER_MAX_BYTES;
  const timeout = AbortSignal.timeout(c.timeoutMs ?? PROVIDER_CALL_TIMEOUT_MS);
  const signal = c.signal ? AbortSignal.any([c.signal, timeout]) : timeout;
  const where = `${c.provider.name} ${c.url.pathname}`;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(c.url, { method: c.method, headers: c.headers, body: c.body, signal, dispatcher: agentFor(c.origins.configured !== null) });
  } catch (err) {
    throw callFailure(c, err, timeout, `${where} did not answer`);
  }
  const headers = answerHeaders(res.headers);
  const tooLarge = () =>
    new ProviderCallError('rejected', `${where} answered more than ${maxBytes / 1024 / 1024} MiB; the answer was dropped while it streamed`, null, res.statusCode);
  const declared = Number(headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    res.body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res.body) {
      total += (chunk as Buffer).length;
      if (total > maxBytes) {
        res.body.destroy();
        throw tooLarge();
      }
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    if (err instanceof ProviderCallError) throw err;
    throw callFailure(c, err, timeout, `${where} broke off its answer`);
  }
  return { status: res.statusCode, statusText: STATUS_CODES[res.statusCode] ?? '', headers, body: Buffer.concat(chunks, total) };
}

/** The answer's headers as a Headers object; a header Headers itself would refuse is left out rather than failing the call. */
function answerHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
      try {
        headers.append(name, v);
      } catch {
        // Not a header any connector reads.
      }
    }
  }
  return headers;
}

function callFailure(c: ProviderCall, err: unknown, timeout: AbortSignal, what: string): Error {
  // The run's own end (its lease lost) is the run's business, not the provider's.
  if (c.signal?.aborted) return err as Error;
  const e = err as Error & { cause?: unknown };
  const forbidden = e instanceof ForbiddenAddressError ? e : e?.cause instanceof ForbiddenAddressError ? e.cause : null;
  if (forbidden) {
    return new ProviderCallError(
      'rejected',
      `${c.provider.name} resolves to ${forbidden.address} (${forbidden.range}); not called: a provider is called at a private address only when ${settingPrefix(c.provider.slug)}_BASE_URL names it`,
    );
  }
  return new ProviderCallError('unavailable', `${what}: ${timeout.aborted ? 'time-out' : (e?.message ?? String(err))}`.slice(0, 300));
}

/** An answer's body as a JSON object, for classing a refusal by its words; `{}` when it is not one. */
export function jsonObject(body: Buffer): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
