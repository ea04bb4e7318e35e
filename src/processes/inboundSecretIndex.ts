import type { Logger } from 'pino';
import { indexInboundSecret } from '../../commands/connections/indexInboundSecret.js';
import { INBOUND_SECRET_KEY } from '../../commands/connections/providerKeys.js';
import { PROVIDER_KEYS, type ProviderKeysDoc } from '../../projections/connections/providerKeysProjection.js';
import type { ValueSealer } from '../crypto/sealedValue.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';

/**
 * At start-up: tenants' keys holding an INBOUND_SECRET that the provider-keys read model has no
 * digest of (set before the digest was recorded) get it, once, so that their inbound address
 * keeps working after the upgrade (issue 20). Bounded by the tenants' keys; a repeat, or another
 * process doing the same, appends nothing. Answers how many were indexed.
 */
export async function indexInboundSecrets(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  sealer: ValueSealer;
  /** Resolves once the provider-keys read model holds every event appended so far. */
  settle: () => Promise<void>;
  log: Logger;
}): Promise<number> {
  await deps.settle();
  let indexed = 0;
  for (const doc of await deps.readStore.find<ProviderKeysDoc>(PROVIDER_KEYS, {})) {
    if (doc.inbound_secret_digest || !doc.sealed_values[INBOUND_SECRET_KEY]) continue;
    if (await indexInboundSecret(deps.eventStore, deps.sealer, { tenantId: doc.tenant_id, provider: doc.provider, at: new Date().toISOString() })) indexed++;
  }
  if (indexed > 0) deps.log.info({ indexed }, 'inbound secrets of provider keys indexed');
  return indexed;
}
