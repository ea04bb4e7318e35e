import type { Logger } from 'pino';
import type { ReadStore, Scalar } from '../../readstore/readStore.js';
import { PollLoop } from '../../shared/pollLoop.js';
import { DELIVERIES, type DeliveryDoc } from '../../webhooks/deliveryDocs.js';
import { fillDeliverySubjects } from './deliverySubjects.js';

export const DAY_MS = 86_400_000;
/** Deliveries deleted per transaction, and per run (a run leaves the rest to the next one). */
const PAGE = 1_000;
const PER_RUN = 50_000;
const EVERY_MS = 10 * 60_000;

export type RetentionOptions = {
  readStore: ReadStore;
  /** WEBHOOK_DELIVERY_RETENTION_DAYS, in milliseconds. */
  retentionMs: number;
  now: () => number;
  log?: Logger;
};

/**
 * Webhook deliveries are kept for a period (WEBHOOK_DELIVERY_RETENTION_DAYS, docs/webhooks.md):
 * their bodies name users, external_refs, record types and days. Every ten minutes, deliveries
 * created before the period that are finished (`done` or `parked`: an open one still has
 * attempts to make) are deleted, oldest first, at most 50,000 per run in transactions of 1,000,
 * and the embedded store's write-ahead log is emptied so their pages are gone from the files;
 * once a day the file is also rewritten, for the copies B-tree rebalancing left behind.
 * Deliveries stored before deliveries named their user get their user filled in on the way.
 */
export class DeliveryRetention {
  private readonly loop: PollLoop;
  private current: Promise<number> | null = null;
  private stopping = false;
  private lastRewriteAt = -Infinity;

  constructor(private readonly o: RetentionOptions) {
    this.loop = new PollLoop(
      async () => void (await this.runOnce()),
      EVERY_MS,
      (err) => o.log?.error({ err }, 'purging old webhook deliveries failed'),
    );
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.loop.stop();
    await this.current?.catch(() => {});
  }

  /** One run (also for tests and operators, with another clock): answers how many deliveries it deleted. */
  runOnce(now = this.o.now()): Promise<number> {
    const run = (this.current ?? Promise.resolve(0)).catch(() => 0).then(() => this.purge(now));
    this.current = run;
    return run;
  }

  private async purge(now: number): Promise<number> {
    const { readStore } = this.o;
    await fillDeliverySubjects(readStore, () => this.stopping);
    const before = new Date(now - this.o.retentionMs).toISOString();
    let deleted = 0;
    let after: Scalar[] | undefined;
    while (deleted < PER_RUN && !this.stopping) {
      // By creation time alone, oldest first from its index: with `status` in the filter the
      // embedded store planned on the (status, next attempt) index and read every finished
      // delivery at each page. An open one (attempts left) is passed over, not deleted.
      const page = await readStore.find<DeliveryDoc>(DELIVERIES, {
        filter: { created_at: { $lt: before } },
        sort: [['created_at', 1]],
        limit: PAGE,
        after,
        fields: ['_id', 'created_at', 'status'],
      });
      if (page.length === 0) break;
      const finished = page.filter((d) => d.status === 'done' || d.status === 'parked');
      // Erasing: the `user.deleted` deliveries kept the external_ref of a deleted user until now.
      if (finished.length) await readStore.applyChanges(finished.map((d) => ({ op: 'delete' as const, collection: DELIVERIES, id: d._id })), { erasing: true });
      deleted += finished.length;
      if (page.length < PAGE) break;
      const last = page[page.length - 1]!;
      after = [last.created_at, last._id];
      // Other work on this thread has its turn between transactions.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (deleted > 0) {
      // The file is rewritten at most once a day (it costs a pass over the whole file, seconds
      // per gigabyte); the log, which holds most of what was deleted, is emptied every run.
      const rewrite = this.o.now() - this.lastRewriteAt >= DAY_MS;
      await readStore.purgeDeleted?.({ rewrite });
      if (rewrite) this.lastRewriteAt = this.o.now();
      this.o.log?.info({ deleted, before }, 'old webhook deliveries deleted');
    }
    return deleted;
  }
}
