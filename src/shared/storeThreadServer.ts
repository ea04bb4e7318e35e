import { parentPort, workerData } from 'node:worker_threads';
import { sendableError, type StoreAnswer, type StoreThreadReply, type StoreThreadRequest } from './storeThread.js';

type Store = { close(): Promise<void> };

/**
 * The thread's side of `StoreThread` (storeThread.ts), called by a store thread's entry module:
 * opens the store from the options it was started with, then runs the calls it is sent, each as
 * it arrives (so that calls sent together meet in the store's group commit), and answers each
 * once the store did. On `close`, waits for the calls under way, closes the store and lets the
 * thread end.
 *
 * `inOrder`: each call starts only once the one before it was answered, so a read sees every
 * write asked for before it (the embedded store runs a write in its next group, after a read of
 * the same turn); a rebuild's replay sends its reads behind the write it has not waited for
 * (threadedSqliteReadStore.ts).
 */
export async function serveStore<S extends Store>(open: (options: never) => S | Promise<S>, options: { inOrder?: boolean } = {}): Promise<void> {
  const port = parentPort!;
  const post = (m: StoreThreadReply) => port.postMessage(m);
  const store = await open((workerData as { options: never }).options);
  const underWay = new Set<Promise<void>>();
  // The answers of a turn (a group commit's callers) go back in one message, at its end.
  let answers: StoreAnswer[] = [];
  const flush = () => {
    const batch = answers;
    answers = [];
    try {
      post({ type: 'answers', answers: batch });
    } catch {
      // A value that cannot be cloned fails its own call only.
      for (const a of batch) {
        try {
          post({ type: 'answers', answers: [a] });
        } catch (err) {
          post({ type: 'answers', answers: [{ id: a.id, error: sendableError(err) }] });
        }
      }
    }
  };
  const answer = (a: StoreAnswer) => {
    if (answers.push(a) === 1) setImmediate(flush);
  };
  const run = async (id: number, method: string, args: unknown[]) => {
    try {
      const fn = (store as unknown as Record<string, unknown>)[method];
      if (typeof fn !== 'function' || method === 'close') throw new Error(`the store has no method ${method} to call`);
      answer({ id, value: await (fn as (...a: unknown[]) => unknown).apply(store, args) });
    } catch (err) {
      answer({ id, error: sendableError(err) });
    }
  };
  let last: Promise<void> = Promise.resolve();
  port.on('message', (m: StoreThreadRequest) => {
    if (m.type === 'calls') {
      // Each call starts here, in order: calls that arrive together meet in the store's group commit.
      for (const { id, method, args } of m.calls) {
        const call = options.inOrder ? (last = last.then(() => run(id, method, args))) : run(id, method, args);
        underWay.add(call);
        void call.finally(() => underWay.delete(call));
      }
      return;
    }
    void (async () => {
      await Promise.all(underWay);
      await new Promise((r) => setImmediate(r));
      await store.close();
      post({ type: 'closed' });
      port.close();
    })();
  });
  post({ type: 'ready' });
}
