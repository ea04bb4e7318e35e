import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import { SqliteEventStore } from '../../../src/eventstore/sqliteEventStore.js';
import { DELETION_JOB } from '../../../src/processes/deletions/deletionJobRunner.js';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';
import { ETL_BULK_JOB, ETL_JOB } from '../../../src/processes/etl/etlWorker.js';
import { jobFeederReactor, jobFor } from '../../../src/processes/jobs/jobFeeder.js';
import { ReactorRuntime } from '../../../src/projector/reactor.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { SqliteWorkQueue } from '../../../src/workqueue/sqliteWorkQueue.js';
import { tempDir } from '../../support/tmp.js';

/**
 * Issue 26, the job feeder: every accepted upload and deletion request gets its queue job, also
 * those appended while no process ran the feeder (its lease holder was killed and the lease not
 * yet taken over). The multi-process test once lost the first upload sent after the kill: the
 * reactor runtime dropped the first event a new run was handed (src/projector/reactor.ts). Every
 * wait is for a condition.
 */
const USER = '0190c5a0-0000-7000-8000-000000000001';
const TENANT = '0190c5a0-0000-7000-8000-000000000002';

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const accepted = (uploadId: string) => ({
  type: 'upload.accepted',
  data: { upload_id: uploadId, user_id: USER, tenant_id: TENANT, provider: 'device-a', tier: 'upload' },
});

describe('the job feeder (issue 26)', () => {
  it("contracts §18: an accepted upload's ETL job is in its tenant's and user's lane (claims take turns between them), small or bulk", async () => {
    // An accepted upload carries its own size and lane: the event store is not read.
    const noStore = null as never;
    const small = await jobFor({ type: 'upload.accepted', streamName: uploadStream(USER, 'device-a', 'u-1'), data: { ...accepted('u-1').data, bytes: 10 } }, noStore);
    const bulk = await jobFor({ type: 'upload.accepted', streamName: uploadStream(USER, 'device-a', 'u-2'), data: { ...accepted('u-2').data, bytes: 2 ** 40 } }, noStore);
    expect(small).toMatchObject({ kind: ETL_JOB, tenant: TENANT, user: USER });
    expect(bulk).toMatchObject({ kind: 'etl.bulk', tenant: TENANT, user: USER });
  });

  it('enqueues a job for every upload accepted while no process held its lease, the first one included, once the lease is taken over', async () => {
    const dir = tempDir('wellstream-feeder-');
    const eventStore = new SqliteEventStore({ path: join(dir, 'events.sqlite') });
    const readStore = new SqliteReadStore({ path: join(dir, 'readmodels.sqlite') });
    const queue = new SqliteWorkQueue({ path: join(dir, 'jobs.sqlite') });
    const leases = (holder: string) => ({ store: readStore.leases(), holder, leaseMs: 10_000, renewMs: 1000 });
    const feeder = () => [jobFeederReactor({ queue, eventStore, kick: () => {} })];
    const streams = ['up-1', 'up-2', 'up-3'].map((id) => uploadStream(USER, 'device-a', id));
    try {
      const first = new ReactorRuntime(eventStore, readStore, feeder(), undefined, leases('proc-a'));
      await first.start();
      await eventStore.appendToStream(streams[0]!, [accepted('up-1')]);
      await until(async () => (await readStore.getCheckpoint('reactor:job-feeder'))?.position === 1);
      // Its holder goes away; uploads and a deletion request arrive through other processes meanwhile.
      await first.stop();
      await eventStore.appendToStream(streams[1]!, [accepted('up-2')]);
      await eventStore.appendToStream(streams[2]!, [accepted('up-3')]);
      await eventStore.appendToStream(`user-${USER}`, [{ type: 'user.deletion_requested', data: { job_id: 'del-1', user_id: USER, tenant_id: TENANT } }]);
      const second = new ReactorRuntime(eventStore, readStore, feeder(), undefined, leases('proc-b'));
      await second.start();
      await until(async () => (await readStore.getCheckpoint('reactor:job-feeder'))?.position === 4);
      for (const stream of streams) expect((await queue.findLive(ETL_JOB, stream))?.payload, stream).toEqual({ stream });
      expect((await queue.findLive(DELETION_JOB, 'del-1'))?.payload).toEqual({ jobId: 'del-1', userId: USER });
      await second.stop();
    } finally {
      await queue.close();
      await eventStore.close();
      await readStore.close();
    }
  });

  it('contracts §18: a parked bulk upload retried by an operator gets its job in the bulk lane again (its size read from its acceptance), a small one in the small lane', async () => {
    const dir = tempDir('wellstream-feeder-retry-');
    const eventStore = new SqliteEventStore({ path: join(dir, 'events.sqlite') });
    try {
      const sized = (uploadId: string, bytes: number) => ({ ...accepted(uploadId), data: { ...accepted(uploadId).data, bytes } });
      const big = uploadStream(USER, 'device-a', 'big');
      const small = uploadStream(USER, 'device-a', 'small');
      await eventStore.appendToStream(big, [sized('big', BULK_UPLOAD_BYTES)]);
      await eventStore.appendToStream(small, [sized('small', 2048)]);
      const retried = (streamName: string) => ({ type: 'etl.job_retried', streamName, data: { user_id: USER, tenant_id: TENANT, by: 'operator', at: '2026-11-03T10:00:00.000Z' } });

      expect(await jobFor(retried(big), eventStore)).toMatchObject({ kind: ETL_BULK_JOB, key: big, lock: `etl-bulk:${USER}` });
      expect(await jobFor(retried(small), eventStore)).toMatchObject({ kind: ETL_JOB, key: small });
    } finally {
      await eventStore.close();
    }
  });
});
