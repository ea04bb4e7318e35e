import { z } from 'zod';
import type { EventStore } from '../../src/eventstore/eventStore.js';
import { connectedProvider } from '../../src/catalog/providers.js';
import { sealValue, type ValueSealer } from '../../src/crypto/sealedValue.js';
import { sha256Hex } from '../../src/shared/secrets.js';
import { DomainError } from '../shared/domainError.js';
import { handleCommand } from '../shared/commandHandler.js';
import {
  INBOUND_SECRET_KEY,
  inboundSecretDigest,
  maskClientId,
  PROVIDER_KEY_PURPOSE,
  providerKeyOwner,
  providerKeysState,
  providerKeysStream,
  type ProviderKeysReplaced,
  type ProviderKeysState,
} from './providerKeys.js';

export const ReplaceProviderKeysInput = z.object({
  tenantId: z.string().uuid(),
  provider: z.string().min(1),
  keys: z.record(z.string(), z.string()),
  at: z.string().datetime(),
  by: z.string().min(1),
});
export type ReplaceProviderKeys = z.infer<typeof ReplaceProviderKeysInput>;

/** The provider application keys name: connections made under another one must consent again. */
export function applicationOf(keys: Readonly<Record<string, string>>): string {
  return sha256Hex(JSON.stringify([keys.CLIENT_ID ?? '', keys.REGION ?? '', keys.ENVIRONMENT ?? '']));
}

/**
 * Spec "Tenant provider keys": missing required keys are a 400, unknown names too (a misspelt
 * key would otherwise be stored and never used); the provider's own rules run before anything is
 * stored and refuse with a 422 and their reason. Answers whether the application changed.
 */
export function decideReplaceProviderKeys(cmd: ReplaceProviderKeys, state: ProviderKeysState, sealer: ValueSealer): { event: ProviderKeysReplaced; applicationChanged: boolean } {
  const provider = connectedProvider(cmd.provider);
  if (!provider) throw new DomainError('not_found', `unknown provider ${cmd.provider}`);
  const known = new Set(provider.keys.map((k) => k.name));
  const unknown = Object.keys(cmd.keys).filter((n) => !known.has(n));
  if (unknown.length) throw new DomainError('invalid', `unknown key ${unknown.map((n) => n.slice(0, 40)).join(', ')} for ${provider.slug}; keys: ${[...known].join(', ')}`);
  const missing = provider.keys.filter((k) => k.required && !cmd.keys[k.name]).map((k) => k.name);
  if (missing.length) throw new DomainError('invalid', `missing required key ${missing.join(', ')}`);
  const reason = provider.validateKeys(cmd.keys);
  if (reason) throw new DomainError('unprocessable', `${provider.name} refuses these keys: ${reason}`);
  const application = applicationOf(cmd.keys);
  const sealed: Record<string, string> = {};
  for (const [name, value] of Object.entries(cmd.keys)) sealed[name] = sealValue(sealer, PROVIDER_KEY_PURPOSE, providerKeyOwner(cmd.tenantId, cmd.provider, name), value);
  const inbound = cmd.keys[INBOUND_SECRET_KEY];
  return {
    event: {
      type: 'provider_keys.replaced',
      data: {
        tenant_id: cmd.tenantId,
        provider: cmd.provider,
        sealed_values: sealed,
        client_id_masked: maskClientId(cmd.keys.CLIENT_ID!),
        application,
        created_at: state.createdAt ?? cmd.at,
        ...(inbound ? { inbound_secret_digest: inboundSecretDigest(inbound) } : {}),
        at: cmd.at,
        by: cmd.by,
      },
    },
    applicationChanged: state.set && state.application !== application,
  };
}

export async function replaceProviderKeys(eventStore: EventStore, sealer: ValueSealer, input: ReplaceProviderKeys) {
  const cmd = ReplaceProviderKeysInput.parse(input);
  let applicationChanged = false;
  const result = await handleCommand(eventStore, providerKeysStream(cmd.tenantId, cmd.provider), providerKeysState, (state) => {
    const decided = decideReplaceProviderKeys(cmd, state, sealer);
    applicationChanged = decided.applicationChanged;
    return decided.event;
  });
  return { ...result, applicationChanged };
}
