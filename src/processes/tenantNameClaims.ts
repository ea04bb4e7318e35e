import type { Logger } from 'pino';
import type { TenantCreated } from '../../commands/tenants/tenant.js';
import { claimTenantName } from '../../commands/tenants/tenantName.js';
import { DomainError } from '../../commands/shared/domainError.js';
import type { EventStore } from '../eventstore/eventStore.js';
import { defineReactor, type Reactor } from '../projector/reactor.js';

/**
 * Tenants created before names were claimed (commands/tenants/tenantName.ts) hold no claim: this
 * reactor claims each one's name once, oldest first, so an upgraded instance refuses their names
 * too. A tenant created since holds its claim already (a no-op here). Where two old tenants share
 * a name, the older keeps it and the other is only logged: nothing is renamed.
 */
export function tenantNameClaimsReactor(deps: { eventStore: EventStore; log?: Logger }): Reactor {
  return defineReactor<TenantCreated>({
    name: 'tenant-name-claims',
    eventTypes: ['tenant.created'],
    handle: async (event) => {
      const { tenant_id: tenantId, name, created_at: at } = event.data;
      try {
        await claimTenantName(deps.eventStore, { tenantId, name, at });
      } catch (err) {
        if (!(err instanceof DomainError && err.code === 'conflict')) throw err;
        deps.log?.warn({ tenant: tenantId }, 'tenant created before names were unique shares its name with an older tenant');
      }
    },
  });
}
