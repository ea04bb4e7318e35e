import { Readable } from 'node:stream';
import type { EventStore } from '../../../src/eventstore/eventStore.js';
import type { RawStore } from '../../../src/rawstore/rawStore.js';

/** The raw store as the ETL reads it: by range (an unsealed object is read as stored). */
export const rawStoreOf = (payload: Buffer): RawStore =>
  ({ kind: 'file', size: async () => payload.length, readRange: (_k: string, s: number, e: number) => Readable.from([payload.subarray(s, e)]) }) as unknown as RawStore;

/** The event store, killed (every append to `stream` refused) after `appends` appends to it: a crash mid-run. */
export function crashingAfter(store: EventStore, stream: string, appends: number): EventStore {
  let n = 0;
  const wrapped: EventStore = Object.create(store);
  wrapped.appendToStream = async (s, events, options) => {
    if (s === stream && n++ >= appends) throw new Error('killed');
    return store.appendToStream(s, events, options);
  };
  return wrapped;
}
