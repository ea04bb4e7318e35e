import { map } from 'rxjs';
import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';

/** The same log with every global position moved by `by`, as a KurrentDB log of that many bytes would number it. */
export function shiftPositions(inner: EventStore, by: number): EventStore {
  const out = (e: RecordedEvent): RecordedEvent => ({ ...e, globalPosition: e.globalPosition + by });
  const back = (after: number | null | undefined) => (after === null || after === undefined ? after : Math.max(0, after - by));
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'readAll') return async (o: Parameters<EventStore['readAll']>[0] = {}) => (await target.readAll({ ...o, after: back(o.after) })).map(out);
      if (prop === 'subscribeToAll') return (o: Parameters<EventStore['subscribeToAll']>[0] = {}) => target.subscribeToAll({ ...o, after: back(o.after) }).pipe(map(out));
      if (prop === 'headPosition') return async () => (await target.headPosition()) + by;
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
