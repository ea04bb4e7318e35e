import { MongoClient } from 'mongodb';

/**
 * One MongoClient per URL in a process (a worker thread is its own JS realm and holds its own):
 * the read store, the raw store and the leases share its connection pool instead of each
 * opening one, and the pool closes when the last of them closes.
 */
export type MongoHandle = { client: MongoClient; release(): Promise<void> };

type Entry = { client: Promise<MongoClient>; users: number };

const clients = new Map<string, Entry>();

export async function acquireMongoClient(url: string): Promise<MongoHandle> {
  let entry = clients.get(url);
  if (!entry) {
    // Undefined members must disappear, as they do in the embedded store's JSON, not turn into null;
    // bytes (the rollups' packed quarters) read back as Buffers, as the embedded store's BLOBs do.
    const created: Entry = { client: MongoClient.connect(url, { ignoreUndefined: true, promoteBuffers: true }), users: 0 };
    clients.set(url, created);
    created.client.catch(() => {
      if (clients.get(url) === created) clients.delete(url);
    });
    entry = created;
  }
  const held = entry;
  held.users += 1;
  let client: MongoClient;
  try {
    client = await held.client;
  } catch (err) {
    held.users -= 1;
    throw err;
  }
  let released = false;
  return {
    client,
    release: async () => {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      if (clients.get(url) === held) clients.delete(url);
      await client.close();
    },
  };
}

/** How many clients this process holds (tests). */
export function openMongoClients(): number {
  return clients.size;
}
