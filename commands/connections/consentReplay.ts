import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { StreamDeletedError } from '../../src/eventstore/eventStore.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import type { ConsentEventDoc } from '../../projections/connections/connectionsProjection.js';
import { connectionStream, type ConsentChanged } from './connection.js';

/** What a user has consented to: per provider, the categories granted and not revoked since. */
export type ConsentState = Record<string, string[]>;

/** A consent event as the history answers it (spec "Consent event"). */
export type ReplayedConsent = Omit<ConsentEventDoc, '_id' | 'tenant_id' | 'user_id'>;

/** Pure: the consent state after one more consent event. */
export function applyConsent(state: ConsentState, e: ReplayedConsent): ConsentState {
  const current = new Set(state[e.provider] ?? []);
  if (e.action === 'granted') current.add(e.category);
  else current.delete(e.category);
  const next = { ...state };
  if (current.size) next[e.provider] = [...current].sort();
  else delete next[e.provider];
  return next;
}

/**
 * A user's consent events from the event store itself (every connection stream of the user),
 * oldest first: what auditors replay (`npm run cli -- consents replay`), independent of any read
 * model.
 */
export async function readConsentEvents(eventStore: EventStore, userId: string): Promise<ReplayedConsent[]> {
  const out: ReplayedConsent[] = [];
  for (const p of CONNECTED_PROVIDERS) {
    let events: RecordedEvent[];
    try {
      events = await eventStore.readStream(connectionStream(userId, p.slug));
    } catch (err) {
      if (err instanceof StreamDeletedError) continue;
      throw err;
    }
    for (const e of events) {
      if (e.type !== 'consent.granted' && e.type !== 'consent.revoked') continue;
      const d = (e as RecordedEvent<ConsentChanged>).data;
      out.push({ id: e.globalPosition, at: d.at, provider: d.provider, category: d.category, action: e.type === 'consent.granted' ? 'granted' : 'revoked', actor_id: d.actor_id, evidence: d.evidence });
    }
  }
  return out.sort((a, b) => a.id - b.id);
}
