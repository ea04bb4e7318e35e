import { PROVIDER_KEYS, type ProviderKeysDoc } from '../../projections/connections/providerKeysProjection.js';
import { openTenantKeys } from '../../queries/connections/providerKeys.js';
import type { ProviderSettings } from '../catalog/providerFacts.js';
import type { ValueSealer } from '../crypto/sealedValue.js';
import type { ReadStore } from '../readstore/readStore.js';
import { webhookToken } from '../sources/shared/webhookSignatures.js';

/** One provider application the service knows: the instance's keys, or a tenant's own, opened. */
export type WebhookApplication = {
  application: string;
  clientSecret: string;
  /** Fitbit's subscriber verification code, when the application has one. */
  verificationCode: string | undefined;
  /** The token of its webhook address and handshakes (webhookSignatures.ts). */
  token: string;
};

/**
 * How long a provider's applications are served without asking the read model whether keys
 * changed; then one read of the provider-keys checkpoint decides (reload only when it moved).
 * With the projection's own lag this keeps other processes well within the spec's 30 seconds
 * for provider key propagation; the process that changed them, or that applies the projection,
 * is told at once (`invalidate`).
 */
export const WEBHOOK_APPLICATIONS_MAX_AGE_MS = 10_000;
const PROJECTION = 'provider_keys';

type Loaded = { checkpoint: number; applications: readonly WebhookApplication[] };
type Entry = { loaded: Promise<Loaded>; checkedAt: number; revalidating: Promise<void> | null };

/**
 * Every application of each provider, opened once and kept, so that a webhook delivery (signed
 * or not) costs a map lookup and constant-time comparisons, never a read of every tenant's keys
 * and their unsealing (issue 20). Invalidated by the provider-keys read model: at once in this
 * process when it applies or answers a key change, by its checkpoint elsewhere.
 */
export class WebhookApplications {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly maxAgeMs: number;

  constructor(
    private readonly deps: { readStore: ReadStore; sealer: ValueSealer; providers: Record<string, ProviderSettings>; now?: () => number; maxAgeMs?: number },
  ) {
    this.now = deps.now ?? Date.now;
    this.maxAgeMs = deps.maxAgeMs ?? WEBHOOK_APPLICATIONS_MAX_AGE_MS;
  }

  async of(provider: string): Promise<readonly WebhookApplication[]> {
    let entry = this.entries.get(provider);
    if (entry && this.now() - entry.checkedAt >= this.maxAgeMs) {
      entry.revalidating ??= this.revalidate(provider, entry);
      await entry.revalidating;
      entry = this.entries.get(provider);
    }
    if (!entry) {
      const created: Entry = { loaded: this.load(provider), checkedAt: this.now(), revalidating: null };
      entry = created;
      this.entries.set(provider, created);
      // A failed load is not kept: the next delivery tries again.
      created.loaded.catch(() => {
        if (this.entries.get(provider) === created) this.entries.delete(provider);
      });
    }
    return (await entry.loaded).applications;
  }

  /** Keys changed (this process applied or answered the change): every provider is opened again on its next delivery. */
  invalidate(): void {
    this.entries.clear();
  }

  private async revalidate(provider: string, entry: Entry): Promise<void> {
    try {
      const [loaded, checkpoint] = await Promise.all([entry.loaded, this.checkpoint()]);
      if (checkpoint === loaded.checkpoint) entry.checkedAt = this.now();
      else if (this.entries.get(provider) === entry) this.entries.delete(provider);
    } catch {
      if (this.entries.get(provider) === entry) this.entries.delete(provider);
    } finally {
      entry.revalidating = null;
    }
  }

  private async checkpoint(): Promise<number> {
    return (await this.deps.readStore.getCheckpoint(PROJECTION))?.position ?? 0;
  }

  /** The checkpoint is read first: a change landing during the load moves it past what was loaded. */
  private async load(provider: string): Promise<Loaded> {
    const checkpoint = await this.checkpoint();
    const applications: WebhookApplication[] = [];
    const instance = this.deps.providers[provider];
    if (instance?.clientId && instance.clientSecret) {
      applications.push({ application: 'instance', clientSecret: instance.clientSecret, verificationCode: instance.subscriberVerificationCode, token: webhookToken(provider, instance.clientSecret) });
    }
    for (const doc of await this.deps.readStore.find<ProviderKeysDoc>(PROVIDER_KEYS, { filter: { provider } })) {
      const opened = await openTenantKeys(this.deps.readStore, this.deps.sealer, doc.tenant_id, provider);
      const secret = opened?.values?.CLIENT_SECRET;
      if (secret) applications.push({ application: doc.application, clientSecret: secret, verificationCode: opened.values!.SUBSCRIBER_VERIFICATION_CODE, token: webhookToken(provider, secret) });
    }
    return { checkpoint, applications };
  }
}
