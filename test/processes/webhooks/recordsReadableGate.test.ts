import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecordsReadableGate } from '../../../src/processes/webhooks/recordsReadableGate.js';
import type { DeliveryDoc } from '../../../src/webhooks/deliveryDocs.js';

/**
 * contracts §17: `upload.finished` (and `data.written`) go out only once every record view has
 * applied the log up to the event they announce. A fake of the record views: each wait is a
 * promise the test settles, so nothing here depends on timing.
 */
const delivery = (id: number, event_type: string, endpoint_id = 'ep1') => ({ _id: `${endpoint_id}|${id}`, id, endpoint_id, event_type }) as DeliveryDoc;

function fakes() {
  const waits: { position: number; resolve: () => void; reject: (e: Error) => void }[] = [];
  const released: number[] = [];
  const gate = new RecordsReadableGate(
    (position) => new Promise<void>((resolve, reject) => waits.push({ position, resolve, reject })),
    (docs) => released.push(...docs.map((d) => d.id)),
  );
  return { gate, waits, released };
}

const settled = () => new Promise<void>((r) => setImmediate(r));

afterEach(() => {
  vi.useRealTimers();
});

describe('deliveries announcing records wait for the record views (contracts §17)', () => {
  it('holds upload.finished and data.written until the views pass their position; other events never wait', async () => {
    const { gate, waits, released } = fakes();
    expect(gate.holds(delivery(5, 'user.created'))).toBe(false);
    expect(gate.holds(delivery(7, 'upload.finished'))).toBe(true);
    expect(gate.holds(delivery(9, 'data.written'))).toBe(true);
    // One wait at a time, for the earliest position held.
    expect(waits.map((w) => w.position)).toEqual([7]);
    waits[0]!.resolve();
    await settled();
    expect(released).toEqual([7]);
    expect(waits.map((w) => w.position)).toEqual([7, 9]);
    waits[1]!.resolve();
    await settled();
    expect(released).toEqual([7, 9]);
    // Below what the views are known to have applied, nothing waits again.
    expect(gate.holds(delivery(8, 'upload.finished', 'ep2'))).toBe(false);
  });

  it('waits again after a wait that gave up (a stalled view), and releases once the views get there', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { gate, waits, released } = fakes();
    gate.holds(delivery(3, 'upload.finished'));
    waits[0]!.reject(new Error('projection samples did not reach 3'));
    await settled();
    expect(waits).toHaveLength(1);
    await vi.runOnlyPendingTimersAsync();
    expect(waits.map((w) => w.position)).toEqual([3, 3]);
    waits[1]!.resolve();
    await settled();
    expect(released).toEqual([3]);
  });

  it('gives back the held deliveries of a stopped endpoint, and forgets everything on reset', async () => {
    const { gate, waits, released } = fakes();
    gate.holds(delivery(4, 'upload.finished', 'ep1'));
    gate.holds(delivery(6, 'upload.finished', 'ep2'));
    expect(gate.drop('ep1').map((d) => d.id)).toEqual([4]);
    gate.reset();
    waits[0]!.resolve();
    await settled();
    expect(released).toEqual([]);
  });

  it('holds nothing without a way to know where the record views stand', () => {
    const gate = new RecordsReadableGate(undefined, () => {});
    expect(gate.holds(delivery(1, 'upload.finished'))).toBe(false);
  });
});
