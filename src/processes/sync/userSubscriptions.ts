import { createHash } from 'node:crypto';
import type { ConnectionCredentials } from '../../../commands/connections/connectionCredentials.js';
import type { Logger } from 'pino';
import type { ConnectionSynced } from '../../../commands/sync/connectionSync.js';
import { resolveProviderClient } from '../../../queries/connections/providerKeys.js';
import type { ProviderSettings } from '../../catalog/providerFacts.js';
import type { ValueSealer } from '../../crypto/sealedValue.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import { defineReactor, type Reactor } from '../../projector/reactor.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { fitbit } from '../../sources/providers/fitbit/provider.js';
import { providerHttp } from '../../sources/shared/providerHttp.js';
import type { ProviderDescriptor } from '../../sources/shared/providerDescriptor.js';
import { ConnectionTokens } from './connectionTokens.js';
import { withings } from '../../sources/providers/withings/provider.js';
import { webhookToken } from '../../sources/shared/webhookSignatures.js';

export type SubscriptionDeps = {
  eventStore: EventStore;
  readStore: ReadStore;
  credentials: ConnectionCredentials;
  sealer: ValueSealer;
  providers: Record<string, ProviderSettings>;
  publicBaseUrl: string;
  now: () => Date;
  log?: Logger;
};

/** The Withings notification categories subscribed: weight and body, blood pressure and heart rate, activity, sleep. */
export const WITHINGS_SUBSCRIBED_APPLI = ['1', '4', '16', '44'] as const;

/** Fitbit's subscription id of a connection: unique per subscriber, at most 50 characters, stable (a repeat is the same subscription). */
export const fitbitSubscriptionId = (userId: string) => `ws-${createHash('sha256').update(userId).digest('hex').slice(0, 32)}`;

const SUBSCRIBED: Readonly<Record<string, { provider: ProviderDescriptor; origin: string }>> = {
  fitbit: { provider: fitbit, origin: 'https://api.fitbit.com' },
  withings: { provider: withings, origin: 'https://wbsapi.withings.net' },
};

/**
 * Fitbit and Withings notify only about users subscribed one by one, with the user's own token:
 * Fitbit `POST /1/user/-/apiSubscriptions/{id}.json` (every collection, to the application's
 * subscriber), Withings `POST /notify` `action=subscribe` per category, to the application's
 * webhook address. Answers how many subscriptions the provider accepted (one already there counts).
 */
export async function subscribeUser(deps: SubscriptionDeps, c: { tenantId: string; userId: string; provider: string }): Promise<number> {
  const target = SUBSCRIBED[c.provider];
  if (!target) return 0;
  const client = await resolveProviderClient(deps.readStore, deps.sealer, deps.providers, c.tenantId, c.provider);
  if (!client) return 0;
  const tokens = new ConnectionTokens({ eventStore: deps.eventStore, credentials: deps.credentials, sealer: deps.sealer, provider: target.provider, client, userId: c.userId, now: deps.now });
  await tokens.load();
  const http = providerHttp({ provider: target.provider, baseUrl: client.baseUrl, origins: { data: target.origin }, accessToken: () => tokens.accessToken() });
  if (c.provider === 'fitbit') {
    const answer = await http({ method: 'POST', path: `/1/user/-/apiSubscriptions/${fitbitSubscriptionId(c.userId)}.json` });
    // 201 made, 200 already there for this subscriber, 409 already there for another of the application's subscribers.
    return answer.status === 200 || answer.status === 201 || answer.status === 409 ? 1 : 0;
  }
  const callbackurl = `${deps.publicBaseUrl}/webhooks/withings/${webhookToken('withings', client.clientSecret)}`;
  let made = 0;
  for (const appli of WITHINGS_SUBSCRIBED_APPLI) {
    const answer = await http({ path: '/notify', form: { action: 'subscribe', callbackurl, appli } });
    let status: unknown;
    try {
      status = answer.json<{ status?: unknown }>().status;
    } catch {
      status = undefined;
    }
    if (answer.status === 200 && status === 0) made++;
  }
  return made;
}

/**
 * Subscribes a Fitbit or Withings user once a backfill of the connection succeeded (made or made
 * again: the grant works, and the data before it is in; a provider drops subscriptions with a
 * revoked grant). Best effort: a refusal or failure is logged and leaves the
 * user to the scheduled pulls; a replay of the event subscribes again, which the providers treat
 * as the same subscription.
 */
export function userSubscriptionsReactor(deps: SubscriptionDeps): Reactor {
  return defineReactor<ConnectionSynced>({
    name: 'provider-user-subscriptions',
    eventTypes: ['connection_sync.synced'],
    handle: async (event) => {
      const d = event.data;
      if (d.trigger !== 'backfill' || !SUBSCRIBED[d.provider]) return;
      try {
        const made = await subscribeUser(deps, { tenantId: d.tenant_id, userId: d.user_id, provider: d.provider });
        deps.log?.info({ provider: d.provider, user_id: d.user_id, subscriptions: made }, 'provider notification subscriptions');
      } catch (err) {
        deps.log?.warn({ provider: d.provider, user_id: d.user_id, err: err instanceof Error ? err.message : String(err) }, 'provider notification subscription failed');
      }
    },
  });
}
