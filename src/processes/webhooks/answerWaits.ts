/**
 * Waits for deliveries to leave the worker's memory (each attempt ended and its outcome was handed
 * to the writes, or it was parked): a dispatcher batch waits so, a short while at most, before it
 * stores its rows with the outcomes that came back (docs/webhooks.md "What one delivery costs the
 * store").
 */
export class AnswerWaits {
  private readonly waits = new Set<(id: string) => void>();

  /** The delivery `id` left memory. */
  left(id: string): void {
    for (const wait of this.waits) wait(id);
  }

  /** Resolves once every one of `open` left memory, or after `ms`, whichever comes first. */
  until(open: Set<string>, ms: number): Promise<void> {
    if (open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waits.delete(wait);
        resolve();
      };
      const wait = (id: string) => {
        if (open.delete(id) && open.size === 0) done();
      };
      const timer = setTimeout(done, ms);
      this.waits.add(wait);
    });
  }
}
