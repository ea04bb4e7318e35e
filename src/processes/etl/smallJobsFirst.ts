/**
 * Small jobs first, within one ETL thread (issue 27: a big import never holds other users' small
 * uploads back). A thread runs its jobs interleaved on one event loop, so a small job's few short
 * steps (open, parse, append, finish) each used to wait behind a stretch of the import's
 * synchronous work: at 16 small uploads a second beside a 1M-record import, small uploads waited
 * 20 s at the median (BENCHMARKS.md, "The load benchmark"). Now a bulk job, before each of its
 * appends, waits while small jobs of its thread are running, but never longer than `maxWaitMs` a
 * time: the import still moves at least one batch per `maxWaitMs` under any stream of small jobs.
 */
export class SmallJobsFirst {
  private running = 0;
  private readonly waiting = new Set<() => void>();

  constructor(private readonly maxWaitMs = 250) {}

  /** Runs a small job, counted while it runs. */
  async small<T>(run: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await run();
    } finally {
      if (--this.running === 0) this.release();
    }
  }

  /** What a bulk job awaits before an append: nothing when no small job runs. */
  yieldToSmall(): Promise<void> | undefined {
    if (this.running === 0) return undefined;
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.maxWaitMs);
      this.waiting.add(done);
    });
  }

  /** Small jobs running now (tests). */
  get smallRunning(): number {
    return this.running;
  }

  private release(): void {
    for (const done of [...this.waiting]) done();
  }
}
