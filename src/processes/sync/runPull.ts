import { markNeedsReauth } from '../../../commands/connections/markNeedsReauth.js';
import { ConnectionCredentials } from '../../../commands/connections/connectionCredentials.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import type { SyncHealth } from '../../../commands/sync/connectionSync.js';
import { recordSyncOutcome } from '../../../commands/sync/recordSyncOutcome.js';
import { cancelSyncRun, failSyncAttempt, failSyncRun, LeaseLostError, succeedSyncRun, type HeldRun } from '../../../commands/sync/syncRunTransitions.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { userState, userStream } from '../../../commands/users/user.js';
import { getConnection } from '../../../queries/connections/listConnections.js';
import { resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import type { ProviderSettings } from '../../catalog/providerFacts.js';
import { connectedProvider } from '../../catalog/providers.js';
import type { DataKeys } from '../../crypto/dataKeys.js';
import type { ValueSealer } from '../../crypto/sealedValue.js';
import { StreamDeletedError, type EventStore } from '../../eventstore/eventStore.js';
import { pulledPayloadId, storeProviderPayload } from '../etl/storeProviderPayload.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { ProviderCallError } from '../../sources/shared/oauthClient.js';
import { providerDescriptor } from '../../sources/registry.js';
import { providerHttp } from '../../sources/shared/providerHttp.js';
import type { PullConnector, PullContext } from '../../sources/shared/pullConnector.js';
import { ConnectionTokens, NoGrantError } from './connectionTokens.js';
import { backoffMs, MAX_RATE_LIMITED_ATTEMPTS, rateLimitWaitMs, type SyncSettings } from '../../../commands/sync/syncSchedule.js';

export type PullDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  rawStore: RawStore;
  dataKeys: DataKeys;
  sealer: ValueSealer;
  providers: Record<string, ProviderSettings>;
  connectors: Readonly<Partial<Record<string, PullConnector>>>;
  settings: SyncSettings;
  now: () => Date;
  /** Read-your-writes for the ETL queue, then a kick: the stored payloads are normalised at once. */
  afterStored?: (position: number) => Promise<void>;
};

/** The claimed run as the worker holds it: `apply` appends to it in turn with the lease renewals. */
export type PullHold = { current: () => HeldRun; apply: (f: (run: HeldRun) => Promise<HeldRun>) => Promise<void>; signal: AbortSignal };

/** How the held run ended, for the worker's log. */
export type PullOutcome = 'succeeded' | 'retrying' | 'rate_limited' | 'failed' | 'cancelled' | 'lost';

/**
 * Carries out one attempt of a claimed run: opens (and refreshes) the connection's tokens, has the
 * connector pull the window, stores each payload unchanged through storeProviderPayload (tier
 * backfill or sync; named by run, ref and body, so a retried attempt stores nothing twice), lets
 * the connector acknowledge, and records the outcome on the run and on the connection.
 * `hold()` answers the run as the worker's lease keeps it (its revision moves with each renewal).
 */
export async function runPull(deps: PullDeps, hold: PullHold): Promise<PullOutcome> {
  const q = hold.current().state.queued!;
  const provider = providerDescriptor(q.provider);
  const connector = deps.connectors[q.provider];
  const since = () => deps.now().toISOString();
  const finish = (f: (run: HeldRun) => Promise<HeldRun>) => hold.apply(f);
  // The tokens once opened: a refusal names their grant.
  const held: { tokens: ConnectionTokens | null } = { tokens: null };

  try {
    const user = (await loadState(deps.eventStore, userStream(q.user_id), userState)).state;
    if (user.status !== 'active') {
      await cancelSyncRun(deps.eventStore, hold.current().stream, 'the user is being deleted', deps.now());
      return 'cancelled';
    }
    // Attempts spent by processes that stopped mid-pull (claimSyncRun counted them): no more.
    if (hold.current().state.retries >= deps.settings.maxAttempts) {
      await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'exhausted', error: hold.current().state.error ?? 'attempts spent' }, deps.now()));
      return 'failed';
    }
    const client = provider && connector ? await resolveProviderClient(deps.readStore, deps.sealer, deps.providers, q.tenant_id, q.provider) : null;
    if (!provider || !connector || !client) {
      await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'not_enabled', error: `${provider?.name ?? q.provider} is not enabled for this tenant` }, deps.now()));
      return 'failed';
    }
    const tokens = new ConnectionTokens({ eventStore: deps.eventStore, credentials: new ConnectionCredentials(deps.readStore, deps.dataKeys), sealer: deps.sealer, provider, client, userId: q.user_id, now: deps.now });
    await tokens.load();
    held.tokens = tokens;
    const connection = await getConnection(deps.readStore, q.tenant_id, q.user_id, q.provider);
    const ctx: PullContext = {
      window: { start: new Date(q.window_start), end: new Date(q.window_end) },
      trigger: q.trigger,
      dataType: q.data_type,
      http: providerHttp({ provider, baseUrl: client.baseUrl, origins: connector.origins, accessToken: () => tokens.accessToken(), signal: hold.signal, timeoutMs: deps.settings.callTimeoutMs }),
      providerUserId: tokens.providerUserId(),
      scopes: connection?.scopes ?? [],
      signal: hold.signal,
    };
    const runId = hold.current().id;
    let stored = 0;
    let lastPosition = 0;
    for await (const payload of connector.pull(ctx)) {
      if (hold.signal.aborted) throw new LeaseLostError(hold.current().stream);
      const result = await storeProviderPayload(deps, {
        tenantId: q.tenant_id,
        userId: q.user_id,
        provider: q.provider,
        payloadId: pulledPayloadId(runId, payload.ref, payload.body),
        body: payload.body,
        contentType: payload.contentType,
        tier: q.trigger === 'backfill' ? 'backfill' : 'sync',
        dataType: payload.dataType,
        actor: `sync-run:${runId}`,
        at: deps.now(),
      });
      stored++;
      if (result.position !== null) lastPosition = Math.max(lastPosition, result.position);
    }
    if (hold.signal.aborted) throw new LeaseLostError(hold.current().stream);
    await connector.acknowledge?.(ctx);
    if (lastPosition > 0) await deps.afterStored?.(lastPosition);
    await finish((run) => succeedSyncRun(deps.eventStore, run, stored, deps.now()));
    await recordSyncOutcome(deps.eventStore, hold.current(), { synced: true, health: { healthy: true, reason: null, action: null, since: since(), retry_at: null } });
    return 'succeeded';
  } catch (err) {
    if (err instanceof LeaseLostError || hold.signal.aborted) return 'lost';
    if (err instanceof StreamDeletedError || (err instanceof DomainError && err.code === 'gone')) {
      await cancelSyncRun(deps.eventStore, hold.current().stream, 'the user is being deleted', deps.now()).catch(() => false);
      return 'cancelled';
    }
    if (err instanceof NoGrantError) {
      if (err.status === 'needs_reauth') {
        await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'refused', error: 'the connection needs the user to consent again' }, deps.now()));
        return 'failed';
      }
      await cancelSyncRun(deps.eventStore, hold.current().stream, `the connection is ${err.status}`, deps.now());
      return 'cancelled';
    }
    try {
      return await recordFailure(deps, hold, err, finish, held.tokens?.grant() ?? null);
    } catch (e) {
      // Cancelled or taken over while the failure was being recorded: not this worker's to record.
      if (e instanceof LeaseLostError) return 'lost';
      throw e;
    }
  }
}

/** A retired provider's failure as the run and freshness show it: what it answered, and where its users go now. */
function retiredError(slug: string, answered: string): string {
  const successor = connectedProvider(slug)?.retirement?.successor ?? null;
  const gone = `${answered.slice(0, 300)}; the provider is retired`;
  return successor ? `${gone}: reconnect the user through ${successor} (${connectedProvider(successor)?.name ?? successor})` : gone;
}

async function recordFailure(
  deps: PullDeps,
  hold: PullHold,
  err: unknown,
  finish: (f: (run: HeldRun) => Promise<HeldRun>) => Promise<void>,
  grant: string | null,
): Promise<PullOutcome> {
  const now = deps.now();
  const run = hold.current();
  const q = run.state.queued!;
  // Only the provider's own words reach the run's `error`: never a payload or a token.
  const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
  if (err instanceof ProviderCallError && err.kind === 'retired') {
    // The API is gone (contracts §14): the connection waits for the user at the successor; its data stays.
    const gone = retiredError(q.provider, error);
    await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'refused', error: gone }, now));
    await markNeedsReauth(deps.eventStore, { userId: q.user_id, provider: q.provider, reason: 'provider_retired', error: gone, at: now.toISOString() });
    return 'failed';
  }
  if (err instanceof ProviderCallError && err.kind === 'refused') {
    await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'refused', error }, now));
    // Only the grant whose tokens were refused: a reconnect meanwhile made a new one.
    await markNeedsReauth(deps.eventStore, { userId: q.user_id, provider: q.provider, reason: 'provider_refused', error, at: now.toISOString(), grant });
    return 'failed';
  }
  if (err instanceof ProviderCallError && err.kind === 'rejected') {
    // The provider refused the request itself: another attempt would be refused the same way.
    await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'rejected', error }, now));
    await recordSyncOutcome(deps.eventStore, hold.current(), {
      synced: false,
      health: { healthy: false, reason: 'sync_failed', action: 'none', since: now.toISOString(), retry_at: null },
    });
    return 'failed';
  }
  const rateLimited = err instanceof ProviderCallError && err.kind === 'rate_limited';
  const retries = run.state.retries + (rateLimited ? 0 : 1);
  const attempts = run.state.attempts + 1;
  if ((!rateLimited && retries >= deps.settings.maxAttempts) || attempts >= deps.settings.maxAttempts + MAX_RATE_LIMITED_ATTEMPTS) {
    await finish((run) => failSyncRun(deps.eventStore, run, { reason: 'exhausted', error }, now));
    await recordSyncOutcome(deps.eventStore, hold.current(), {
      synced: false,
      health: { healthy: false, reason: 'sync_failed', action: 'none', since: now.toISOString(), retry_at: null },
    });
    return 'failed';
  }
  const waitMs = rateLimited ? rateLimitWaitMs((err as ProviderCallError).retryAfterSeconds) : backoffMs(retries, deps.settings.retryBaseMs);
  const next = new Date(now.getTime() + waitMs);
  const status = rateLimited ? 'rate_limited' : 'retrying';
  await finish((run) => failSyncAttempt(deps.eventStore, run, { status, error, nextAttemptAt: next }, now));
  const health: SyncHealth = {
    healthy: false,
    reason: rateLimited ? 'rate_limited' : 'provider_unavailable',
    action: 'wait',
    since: now.toISOString(),
    retry_at: next.toISOString(),
  };
  await recordSyncOutcome(deps.eventStore, hold.current(), { synced: false, health });
  return status;
}
