import type { Logger } from 'pino';
import type { ReadStore } from '../../readstore/readStore.js';
import { ENDPOINT_HEALTH, type EndpointHealthDoc } from '../../webhooks/deliveryDocs.js';
import { AUTO_DISABLED_REASON, DISABLE_AFTER_MS } from './deliveryLimits.js';
import type { DeliveryWrites } from './deliveryWrites.js';
import type { EndpointDirectory } from './endpointDirectory.js';

export type EndpointHealthDeps = {
  readStore: ReadStore;
  writes: DeliveryWrites;
  endpoints: EndpointDirectory;
  /** Disables the endpoint (appends its event); the engine's command. */
  disableEndpoint: (endpointId: string, reason: string) => Promise<void>;
  log?: Logger;
};

/**
 * Each endpoint's health as the engine knows it (spec "Webhook endpoint": failing_since,
 * last_success_at), kept in memory and written with the attempts' outcomes, and the rule it
 * decides: an endpoint that accepted nothing for 5 days is disabled.
 */
export class EndpointHealth {
  private readonly health = new Map<string, EndpointHealthDoc>();
  private readonly disabling = new Set<string>();

  constructor(private readonly deps: EndpointHealthDeps) {}

  async load(): Promise<void> {
    for (const h of await this.deps.readStore.find<EndpointHealthDoc>(ENDPOINT_HEALTH)) this.health.set(h._id, h);
  }

  of(endpointId: string): EndpointHealthDoc {
    return this.health.get(endpointId) ?? { _id: endpointId, failing_since: null, last_success_at: null };
  }

  /** An attempt was accepted at `at` (ISO). */
  succeeded(endpointId: string, at: string): void {
    this.set(endpointId, { failing_since: null, last_success_at: at });
  }

  /** An attempt begun at `startedAt` (ISO) failed: the endpoint fails from then, unless it did already. */
  failed(endpointId: string, startedAt: string): void {
    const h = this.of(endpointId);
    if (h.failing_since === null) this.set(endpointId, { failing_since: startedAt, last_success_at: h.last_success_at });
  }

  /** Spec "States: Webhook endpoint": disabled when a delivery runs out of attempts and nothing was accepted for 5 days. */
  exhausted(endpointId: string, at: number): void {
    const ep = this.deps.endpoints.get(endpointId);
    if (!ep) return;
    const lastSuccess = this.of(endpointId).last_success_at;
    const acceptingSince = Math.max(Date.parse(ep.activeSince), lastSuccess ? Date.parse(lastSuccess) : 0);
    if (at - acceptingSince < DISABLE_AFTER_MS || this.disabling.has(endpointId)) return;
    this.disabling.add(endpointId);
    this.deps
      .disableEndpoint(endpointId, AUTO_DISABLED_REASON)
      .catch((err) => this.deps.log?.error({ err, endpoint: endpointId }, 'could not disable webhook endpoint'))
      .finally(() => this.disabling.delete(endpointId));
  }

  private set(endpointId: string, h: Omit<EndpointHealthDoc, '_id'>): void {
    this.health.set(endpointId, { _id: endpointId, ...h });
    this.deps.writes.set(ENDPOINT_HEALTH, endpointId, h, true);
  }
}
