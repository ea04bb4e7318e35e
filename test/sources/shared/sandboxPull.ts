import type { TokenSet } from '../../../commands/connections/providerGrants.js';
import { authorizeUrl, exchangeCode } from '../../../src/sources/shared/oauthClient.js';
import { providerHttp } from '../../../src/sources/shared/providerHttp.js';
import type { NormalizedRecord, RejectedItem } from '../../../commands/ingestion/records.js';
import type { PullConnector, PullContext, PulledPayload, PullWindow } from '../../../src/sources/shared/pullConnector.js';
import { SANDBOX_CLIENTS } from '../../../src/sandbox/sandboxClients.js';
import { startSandbox, type Sandbox } from '../../../src/sandbox/sandboxServer.js';

/**
 * Runs a connector against the provider sandbox the way the sync engine does: a grant through
 * the sandbox's OAuth endpoints, the connector's pull over HTTP, every payload through its parser.
 */
const REDIRECT = 'https://health.example.com/oauth/cb';

/** The token set of a consent at the sandbox, with the provider's id of its user when the token answer names it. */
export async function sandboxGrant(sandbox: Sandbox, connector: Pick<PullConnector, 'descriptor'>): Promise<Omit<TokenSet, 'providerUserId'> & { providerUserId: string | null }> {
  const p = connector.descriptor;
  const slug = p.slug;
  const client = { clientId: SANDBOX_CLIENTS[slug]!.id, clientSecret: SANDBOX_CLIENTS[slug]!.secret, baseUrl: sandbox.urls[slug] };
  const res = await fetch(authorizeUrl(p, client, { redirectUri: REDIRECT, state: 'state-of-the-test', codeChallenge: null }), { redirect: 'manual' });
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  const tokens = await exchangeCode(p, client, { code, redirectUri: REDIRECT, verifier: null });
  return { ...tokens, providerUserId: tokens.providerUserId ?? null };
}

/** The sandbox with its clock at `now` and a grant of `connector` there (the start of a connector's pull tests). */
export async function grantedSandbox(connector: Pick<PullConnector, 'descriptor'>, now: Date): Promise<{ sandbox: Sandbox; token: string }> {
  const sandbox = await startSandbox({ now: () => now });
  return { sandbox, token: (await sandboxGrant(sandbox, connector)).accessToken };
}

export type PullRun = { ctx: PullContext; payloads: PulledPayload[] };

export async function runPull(
  sandbox: Sandbox,
  connector: PullConnector,
  o: { accessToken: string; window: PullWindow; providerUserId?: string | null; dataType?: string | null; scopes?: string[] },
): Promise<PullRun> {
  const ctx: PullContext = {
    window: o.window,
    trigger: o.dataType ? 'notification' : 'backfill',
    dataType: o.dataType ?? null,
    providerUserId: o.providerUserId ?? null,
    scopes: o.scopes ?? [],
    signal: new AbortController().signal,
    http: providerHttp({ provider: connector.descriptor, baseUrl: sandbox.urls[connector.descriptor.slug], origins: connector.origins, accessToken: () => o.accessToken }),
  };
  const payloads: PulledPayload[] = [];
  for await (const p of connector.pull(ctx)) payloads.push(p);
  return { ctx, payloads };
}

export async function parseAll(connector: PullConnector, payloads: readonly PulledPayload[], receivedAt: string): Promise<{ records: NormalizedRecord[]; rejected: RejectedItem[] }> {
  const records: NormalizedRecord[] = [];
  const rejected: RejectedItem[] = [];
  for (const p of payloads) {
    for await (const item of connector.parser.parse(p.body, { provider: connector.descriptor.slug, receivedAt, dataType: p.dataType })) {
      if ('record' in item) records.push(item.record);
      else rejected.push(item.rejected);
    }
  }
  return { records, rejected };
}

/** Decodes one JSON payload of a data type (decoder tests). */
export async function decode(connector: PullConnector, dataType: string, body: unknown, receivedAt = '2026-11-20T12:00:00.000Z') {
  return parseAll(connector, [{ dataType, body: Buffer.from(JSON.stringify(body)), contentType: 'application/json', ref: 'test' }], receivedAt);
}
