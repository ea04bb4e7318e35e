import type { KurrentDBAdmin } from './kurrentDBAdmin.js';
import type { KurrentDBNode } from './kurrentDBConnection.js';

/**
 * Scavenges for erasure (docs/erasure.md). KurrentDB keeps a tombstoned stream's events in its
 * files, in `$all` and in its secondary indexes until a scavenge rewrites the chunks that hold
 * them; each node of a cluster keeps its own copy, so each is scavenged. A scavenge covers what
 * was written before it began (its scavenge point, which also closes the chunk being written), so
 * a node that is already scavenging gets a new scavenge once that one ends: started right away
 * when the caller waits, else retried in the background until it starts.
 */
const POLL_MS = 500;
const RETRY_MS = 30_000;
/** Background retries of a node that stays busy: two hours' worth, then the next erasure tries again. */
const MAX_RETRIES = 240;

export class KurrentDBScavenger {
  private readonly retrying = new Map<string, ReturnType<typeof setTimeout>>();
  private closed = false;

  constructor(
    private readonly admin: KurrentDBAdmin,
    private readonly pollMs = POLL_MS,
    private readonly retryMs = RETRY_MS,
  ) {}

  /**
   * Starts a scavenge on every node. With `waitMs`, resolves once each node has completed one
   * that began after this call, and throws when one fails or the time runs out.
   */
  async purge(waitMs?: number): Promise<void> {
    const nodes = await this.admin.members();
    if (waitMs === undefined) {
      await Promise.all(nodes.map((node) => this.startOrRetry(node, 0)));
      return;
    }
    const deadline = Date.now() + waitMs;
    await Promise.all(nodes.map((node) => this.runToEnd(node, deadline)));
  }

  close(): void {
    this.closed = true;
    for (const timer of this.retrying.values()) clearTimeout(timer);
    this.retrying.clear();
  }

  private async startOrRetry(node: KurrentDBNode, attempt: number): Promise<void> {
    const key = `${node.host}:${node.port}`;
    if (this.closed || (attempt === 0 && this.retrying.has(key))) return;
    this.retrying.delete(key);
    const started = await this.admin.startScavenge(node);
    if (started !== 'running' || attempt >= MAX_RETRIES || this.closed) return;
    const timer = setTimeout(() => void this.startOrRetry(node, attempt + 1).catch(() => {}), this.retryMs);
    timer.unref();
    this.retrying.set(key, timer);
  }

  private async runToEnd(node: KurrentDBNode, deadline: number): Promise<void> {
    let id: string | null = null;
    while (id === null) {
      const started = await this.admin.startScavenge(node);
      if (started !== 'running') id = started.id;
      else await this.pause(node, deadline, 'the scavenge already running to end');
    }
    // A scavenge someone started after ours (ours had ended then) covers as much as ours.
    let oursSeen = false;
    for (;;) {
      const last = await this.admin.lastScavenge(node);
      oursSeen ||= last.id === id;
      if (oursSeen && last.result !== 'InProgress') {
        if (last.result === 'Success') return;
        throw new Error(`scavenge ${last.id ?? id} on ${node.host}:${node.port} ended ${last.result}`);
      }
      await this.pause(node, deadline, `scavenge ${id} to end`);
    }
  }

  private async pause(node: KurrentDBNode, deadline: number, what: string): Promise<void> {
    if (Date.now() + this.pollMs > deadline) throw new Error(`KurrentDB node ${node.host}:${node.port}: waited in vain for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, this.pollMs));
  }
}
