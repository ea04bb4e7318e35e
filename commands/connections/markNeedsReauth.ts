import type { EventStore } from '../../src/eventstore/eventStore.js';
import { handleCommand } from '../shared/commandHandler.js';
import { connectionState, connectionStream, type ConnectionNeedsReauth } from './connection.js';

/**
 * An active connection the user must consent to again: the provider refused the grant, or the
 * tenant's keys now name another application (spec "Connection"). Answers whether it changed.
 * `unlessApplication`: leave it active when it was made under that application (a concurrent
 * reconnect under the new keys). `grant`: only while the connection still holds that grant (the
 * provider refused that grant's tokens; a reconnect since made a new grant that nothing refused:
 * issue 36 point 7, a pull with the old tokens marked the demo's fresh reconnect).
 */
export async function markNeedsReauth(
  eventStore: EventStore,
  input: { userId: string; provider: string; reason: string; error: string | null; at: string; unlessApplication?: string; grant?: string | null },
): Promise<{ changed: boolean; position: number }> {
  const result = await handleCommand(eventStore, connectionStream(input.userId, input.provider), connectionState, (state): ConnectionNeedsReauth[] => {
    if (state.status !== 'active' || !state.tenantId) return [];
    if (input.unlessApplication !== undefined && state.application === input.unlessApplication) return [];
    if (input.grant && state.grant !== input.grant) return [];
    return [{ type: 'connection.needs_reauth', data: { tenant_id: state.tenantId, user_id: input.userId, provider: input.provider, reason: input.reason, error: input.error, at: input.at } }];
  });
  return { changed: result.newEvents.length > 0, position: result.position };
}
