/** Why a slot was not given: the user's own is taken, the tenant's share is, or the instance's all are. */
export type SlotRefusal = 'user_busy' | 'tenant_full' | 'full';

/**
 * Work a process does at once for requests that hold it a while (uploads, archives): at most
 * `limit` in all, so the rest of the API keeps its share; at most `perTenant` for one tenant, so
 * one tenant cannot take every slot from the others (contracts §18); and, when `perUser` is set,
 * at most that many for one user, so one user cannot take every slot of the tenant. A slot is
 * taken once the request is authenticated (its tenant known) and before its body is read.
 */
export class InFlightSlots {
  private total = 0;
  private readonly tenants = new Map<string, number>();
  private readonly users = new Map<string, number>();

  constructor(
    readonly limit: number,
    readonly perTenant: number,
    readonly perUser: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Takes a slot for the user of the tenant, or says why it cannot; a taken slot is given back by `release` once. */
  take(tenantId: string, userId: string): 'taken' | SlotRefusal {
    if ((this.users.get(userId) ?? 0) >= this.perUser) return 'user_busy';
    if ((this.tenants.get(tenantId) ?? 0) >= this.perTenant) return 'tenant_full';
    if (this.total >= this.limit) return 'full';
    this.total++;
    this.tenants.set(tenantId, (this.tenants.get(tenantId) ?? 0) + 1);
    this.users.set(userId, (this.users.get(userId) ?? 0) + 1);
    return 'taken';
  }

  release(tenantId: string, userId: string): void {
    this.total--;
    decrement(this.tenants, tenantId);
    decrement(this.users, userId);
  }

  get inFlight(): number {
    return this.total;
  }
}

/** Counts that reach zero go, so the maps hold only tenants and users with work in flight. */
function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
