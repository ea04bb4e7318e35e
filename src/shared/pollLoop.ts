/**
 * Runs `poll` now and then: every `everyMs` after the previous run ended, and at once on
 * `kick()` (work just arrived; a kick during a run starts another as soon as it ends, instead of
 * waiting `everyMs`: a job that finished while the job runner's claim was under way frees a slot
 * that claim did not see). Never two runs at a time; a run that throws is reported to
 * `onError` and the loop goes on. The background workers that take jobs from a read model (the
 * ETL worker, the deletion runner) share it.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** Kicked while a run was under way: what arrived may have come after that run looked. */
  private kicked = false;
  private stopped = true;

  constructor(
    private readonly poll: () => Promise<void>,
    private readonly everyMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  kick(): void {
    if (this.stopped) return;
    if (this.polling) this.kicked = true;
    else this.schedule(0);
  }

  /** No run starts after this; one under way finishes on its own. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      await this.poll();
    } catch (err) {
      this.onError(err);
    } finally {
      this.polling = false;
      const again = this.kicked;
      this.kicked = false;
      if (!this.stopped) this.schedule(again ? 0 : this.everyMs);
    }
  }
}
