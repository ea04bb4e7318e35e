import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { uploadStream } from '../../commands/ingestion/upload.js';
import { userStream } from '../../commands/users/user.js';
import type { RecordedEvent } from '../../src/eventstore/eventStore.js';
import { deadLetterChange } from '../../src/projector/deadLetters.js';
import { reactorDeadLetters } from '../../src/processes/jobs/reactorJobs.js';
import type { Reactor } from '../../src/projector/reactor.js';
import { fixtureB, postUpload, requestFor, waitForEtl } from '../ingest/uploadHelpers.js';
import { expectStatus, startTestApp, type TestApp } from '../support/server.js';
import { tempDir } from '../support/tmp.js';

/**
 * contracts §19 (issue 35, "nothing left in the queue"): after a user's deletion no row of the
 * work queue (`jobs.sqlite`: jobs in any state, dead letters and reactors' set-aside events
 * included) nor of the projections' dead letters names the user, by id or by the client's
 * Upload-Id, while another user's stay. The SQLite files' rows are read as text, as
 * dataDirScan.test.ts reads the files' bytes.
 */
let t: TestApp | undefined;
afterAll(async () => {
  await t?.close();
});

/** Every row of every table of the file whose text holds one of the needles, as `table: row`. */
function rowsNaming(file: string, needles: string[], skip: (table: string, row: Record<string, unknown>) => boolean = () => false): string[] {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    return tables.flatMap((table) =>
      (db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[])
        .filter((row) => !skip(table, row))
        .map((row) => `${table}: ${JSON.stringify(row, (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString('latin1') : v))}`)
        .filter((text) => needles.some((n) => text.includes(n))),
    );
  } finally {
    db.close();
  }
}

const fakeEvent = (stream: string, position: number): RecordedEvent =>
  ({ id: randomUUID(), type: 'samples.ingested', streamName: stream, globalPosition: position, streamRevision: 0, data: {}, metadata: {}, created: new Date() }) as unknown as RecordedEvent;

describe('a user deletion leaves nothing of the user in the work queue or any dead letter (contracts §19)', () => {
  it('no row of jobs.sqlite or of the dead-letter tables names the deleted user or their Upload-Id afterwards; the other user’s stay', { timeout: 120_000 }, async () => {
    const dataDir = tempDir('wellstream-queue-leftovers-');
    t = await startTestApp({ DATA_DIR: dataDir });
    const tenant = await t.createTenant('leftovers');
    const [gone, kept] = [await t.createUser(tenant.apiKey), await t.createUser(tenant.apiKey)];
    const queue = t.ctx.jobs.queue;
    const planted = async (userId: string) => {
      const uploadId = `leftover-${randomUUID()}`;
      const { token } = await t!.mintToken(tenant.apiKey, userId, { scopes: ['upload'] });
      expectStatus(await postUpload(t!, 'device-b', token, uploadId, requestFor('device-b', fixtureB())), 202);
      await waitForEtl(t!, tenant.apiKey, userId);
      const stream = uploadStream(userId, 'device-b', uploadId);
      // A dead job of the user's upload whose error quotes the input; a job waiting; a reactor's set-aside event.
      await queue.enqueue({ kind: 'leftover-probe', key: stream, payload: { stream, upload_id: uploadId } });
      const [claimed] = await queue.claim({ kinds: ['leftover-probe'], n: 1, holder: 'probe', leaseMs: 60_000 });
      await queue.park(claimed!.lease, { error: `upload ${uploadId} of ${userId}: line "${uploadId}" is not a number` });
      await queue.enqueue({ kind: 'leftover-waiting', key: `${userId}:device-b`, payload: { user_id: userId }, runAt: Date.now() + 3600_000 });
      const reactor = { name: 'leftover-reactor' } as Reactor;
      await reactorDeadLetters(queue, () => {})(reactor, fakeEvent(userStream(userId), 1_000_000 + Math.floor(Math.random() * 1e6)), `handler failed on ${uploadId}`);
      // A projection's dead letter of an event on the user's stream.
      await t!.ctx.readStore.applyChanges([deadLetterChange('leftover-projection', fakeEvent(uploadStream(userId, 'device-b', uploadId), 2_000_000 + Math.floor(Math.random() * 1e6)), new Error(`bad "${uploadId}"`), 4, new Date())]);
      return uploadId;
    };
    const goneUpload = await planted(gone.id);
    const keptUpload = await planted(kept.id);
    const jobsFile = join(dataDir, 'jobs.sqlite');
    const readModels = join(dataDir, 'readmodels.sqlite');
    const deadLetterTables = (table: string) => !table.includes('dead_letter');
    // The scan finds what it looks for while it is there.
    expect(rowsNaming(jobsFile, [gone.id]).length).toBeGreaterThanOrEqual(3);
    expect(rowsNaming(readModels, [gone.id], deadLetterTables).length).toBeGreaterThanOrEqual(1);

    const deletionId = await t.deleteUser(tenant.apiKey, gone.id);
    expect((await t.waitForDeletion(tenant.apiKey, deletionId, 60_000)).status).toBe('done');

    // The deletion's own queue job is its record until retention, as its stream is (docs/erasure.md).
    const ownJob = (table: string, row: Record<string, unknown>) => table === 'jobs' && row.kind === 'deletion' && row.key === deletionId;
    expect(rowsNaming(jobsFile, [gone.id, goneUpload], ownJob)).toEqual([]);
    expect(rowsNaming(readModels, [gone.id, goneUpload], deadLetterTables)).toEqual([]);
    // The other user's are untouched.
    expect(rowsNaming(jobsFile, [kept.id]).length).toBeGreaterThanOrEqual(3);
    expect(rowsNaming(readModels, [kept.id], deadLetterTables).length).toBeGreaterThanOrEqual(1);
    // And the error texts kept never quote the input: the Upload-Id of the kept user is in no error.
    const db = new Database(jobsFile, { readonly: true });
    try {
      const errors = db.prepare('SELECT last_error FROM jobs WHERE last_error IS NOT NULL').pluck().all() as string[];
      expect(errors.filter((e) => e.includes(keptUpload) || e.includes(kept.id))).toEqual([]);
    } finally {
      db.close();
    }
  });
});
