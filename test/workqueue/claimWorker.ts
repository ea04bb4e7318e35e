import { createInterface } from 'node:readline';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';

/**
 * One process of the cross-process claim race (sqliteWorkQueue.test.ts): opens the shared file,
 * says it is ready, waits for "go" on stdin, then claims and completes until nothing is due,
 * printing "<holder> <job id> <lock>" for every job it got.
 */
const [path, holder] = process.argv.slice(2) as [string, string];
const queue = new SqliteWorkQueue({ path });
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line === 'go') break;
lines.close();
for (let round = 0; round < 10_000; round++) {
  const claimed = await queue.claim({ kinds: ['race'], n: 3, holder, leaseMs: 120_000 });
  if (claimed.length === 0) break;
  for (const { job, lease } of claimed) {
    process.stdout.write(`${holder} ${job.id} ${job.lock ?? '-'}\n`);
    // Hold a locked job for a moment, so that the other processes meet its lock taken.
    if (job.lock) await new Promise((resolve) => setTimeout(resolve, 2));
    await queue.complete(lease);
  }
}
await queue.close();
