import type { WebhookEndpointState } from '../../../commands/webhooks/webhookEndpoint.js';
import type { WebhookSecrets } from '../../webhooks/secretSealing.js';
import { Signer } from '../../webhooks/signing.js';

/**
 * The engine's in-memory view of every endpoint not deleted, as of the dispatcher's position in the
 * log: the dispatcher folds endpoint events into it, the worker reads url, status and signer from
 * it. An endpoint it does not know is one that was deleted (or never existed): its deliveries park.
 */
export class EndpointDirectory {
  private readonly states = new Map<string, WebhookEndpointState>();
  private readonly byTenant = new Map<string, Set<string>>();
  private readonly signers = new Map<string, Signer>();

  constructor(private readonly secrets: WebhookSecrets) {}

  get(id: string): WebhookEndpointState | undefined {
    return this.states.get(id);
  }

  /** A deleted endpoint is forgotten (issue 26): it gets no delivery again, and the map stays as large as the live endpoints. */
  set(state: WebhookEndpointState): void {
    if (state.status === 'deleted') return this.forget(state);
    const previous = this.states.get(state.id);
    if (previous?.secretSealed !== state.secretSealed) this.signers.delete(state.id);
    this.states.set(state.id, state);
    let ids = this.byTenant.get(state.tenantId);
    if (!ids) this.byTenant.set(state.tenantId, (ids = new Set()));
    ids.add(state.id);
  }

  private forget(state: WebhookEndpointState): void {
    this.states.delete(state.id);
    this.signers.delete(state.id);
    const ids = this.byTenant.get(state.tenantId);
    ids?.delete(state.id);
    if (ids?.size === 0) this.byTenant.delete(state.tenantId);
  }

  clear(): void {
    this.states.clear();
    this.byTenant.clear();
    this.signers.clear();
  }

  /** Active endpoints of the tenant, in the order they were created. */
  activeOf(tenantId: string): WebhookEndpointState[] {
    const out: WebhookEndpointState[] = [];
    for (const id of this.byTenant.get(tenantId) ?? []) {
      const s = this.states.get(id);
      if (s?.status === 'active') out.push(s);
    }
    return out;
  }

  /** True when the tenant has an active endpoint (without building the list). */
  hasActive(tenantId: string): boolean {
    for (const id of this.byTenant.get(tenantId) ?? []) if (this.states.get(id)?.status === 'active') return true;
    return false;
  }

  all(): IterableIterator<WebhookEndpointState> {
    return this.states.values();
  }

  /** Throws SealingKeyError when this instance's sealing keys do not open the endpoint's secret (a rotation without SEALING_KEY_PREVIOUS). */
  signer(id: string): Signer {
    let s = this.signers.get(id);
    if (!s) {
      const state = this.states.get(id);
      if (!state) throw new Error(`unknown webhook endpoint ${id}`);
      s = new Signer(this.secrets.open(state.secretSealed, id));
      this.signers.set(id, s);
    }
    return s;
  }
}
