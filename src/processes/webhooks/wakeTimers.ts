/**
 * Timers for retries coming due. Every wake asked for is kept (to 10 ms), so a retry whose outcome
 * is not stored yet when an earlier wake's poll runs still gets its own; only the earliest is armed
 * at a time.
 */
const WAKE_GRAIN_MS = 10;

export class WakeTimers {
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  /** The wakes asked for, as a min-heap, and as a set so that each is kept once. */
  private readonly heap: number[] = [];
  private readonly wakes = new Set<number>();

  constructor(
    private readonly fire: () => void,
    private readonly stopped: () => boolean,
  ) {}

  /** A wake `delayMs` from now (now when negative). */
  after(delayMs: number): void {
    if (this.stopped()) return;
    const real = Math.ceil((Date.now() + Math.max(0, delayMs)) / WAKE_GRAIN_MS) * WAKE_GRAIN_MS;
    if (this.wakes.has(real)) return;
    this.wakes.add(real);
    heapPush(this.heap, real);
    this.arm();
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    const next = this.heap[0];
    if (next === undefined || this.stopped()) return;
    if (this.timer && next >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = next;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      const now = Date.now();
      while (this.heap.length && this.heap[0]! <= now) this.wakes.delete(heapPop(this.heap)!);
      this.fire();
      this.arm();
    }, Math.min(2 ** 31 - 1, Math.max(0, next - Date.now())));
  }
}

function heapPush(heap: number[], v: number): void {
  heap.push(v);
  for (let i = heap.length - 1; i > 0; ) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= heap[i]!) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function heapPop(heap: number[]): number | undefined {
  const top = heap[0];
  const last = heap.pop();
  if (heap.length && last !== undefined) {
    heap[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && heap[l]! < heap[m]!) m = l;
      if (r < heap.length && heap[r]! < heap[m]!) m = r;
      if (m === i) break;
      [heap[m], heap[i]] = [heap[i]!, heap[m]!];
      i = m;
    }
  }
  return top;
}
