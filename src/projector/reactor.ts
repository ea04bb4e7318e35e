import { concatMap, defer, type Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { Event, EventStore, RecordedEvent } from '../eventstore/eventStore.js';
import type { ReadStore } from '../readstore/readStore.js';

/**
 * A reactor turns events into further commands (a process manager). Unlike a projection it has
 * side effects, so its handler must be idempotent: the runtime delivers at least once and
 * resumes from the last saved checkpoint after a crash.
 */
export type Reactor<E extends Event = Event> = {
  name: string;
  eventTypes: readonly E['type'][];
  handle: (event: RecordedEvent<E>) => Promise<void>;
};

export function defineReactor<E extends Event>(r: Reactor<E>): Reactor {
  return r as unknown as Reactor;
}

const checkpointName = (r: Reactor) => `reactor:${r.name}`;

export class ReactorRuntime {
  private subs: Subscription[] = [];
  private stopped = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly eventStore: EventStore,
    private readonly readStore: ReadStore,
    private readonly reactors: readonly Reactor[],
    private readonly log?: Logger,
  ) {}

  async start(): Promise<void> {
    for (const r of this.reactors) await this.run(r);
  }

  private async run(r: Reactor): Promise<void> {
    if (this.stopped) return;
    const cp = await this.readStore.getCheckpoint(checkpointName(r));
    const sub = this.eventStore
      .subscribeToAll({ after: cp?.position ?? 0, filter: { eventTypes: r.eventTypes } })
      .pipe(
        concatMap((event) =>
          defer(async () => {
            const work = this.handleWithRetry(r, event);
            this.inFlight.add(work);
            try {
              await work;
            } finally {
              this.inFlight.delete(work);
            }
          }),
        ),
      )
      .subscribe({
        error: (err) => {
          this.log?.error({ err, reactor: r.name }, 'reactor stopped on an error; restarting from its checkpoint');
          setTimeout(() => void this.run(r), 2000);
        },
      });
    this.subs.push(sub);
  }

  private async handleWithRetry(r: Reactor, event: RecordedEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (this.stopped) return;
      try {
        await r.handle(event);
        await this.readStore.setCheckpoint(checkpointName(r), event.globalPosition, 'live');
        return;
      } catch (err) {
        if (attempt >= 5) throw err;
        this.log?.warn({ err, reactor: r.name, attempt }, 'reactor step failed; retrying');
        await new Promise((res) => setTimeout(res, 200 * 2 ** attempt));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.subs) s.unsubscribe();
    this.subs = [];
    await Promise.allSettled([...this.inFlight]);
  }
}
