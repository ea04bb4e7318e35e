import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { NOT_FINISHED, UPLOADS, uploadsProjection, type UploadDoc } from '../../../projections/ingestion/uploadsProjection.js';
import { getUpload, listUploads } from '../../../queries/ingestion/uploads.js';
import { MongoReadStore } from '../../../src/readstore/mongoReadStore.js';
import type { ReadStore } from '../../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../../support/tmp.js';

/**
 * contracts §17: the Upload answers its final status only once every record view has applied the
 * log past the event that ended it, and the list's status filter chooses by the status answered.
 * The record views' position is given, so each case is exact; both read-store backends.
 */
const dir = tempDir();
let n = 0;
const PAGE = { limit: 50 };

function doc(upload_id: string, status: UploadDoc['status'], finished_position: number | undefined, received_at: string): UploadDoc {
  const d: UploadDoc = {
    _id: `upload-u1-${upload_id}`,
    user_id: 'u1',
    tenant_id: 't1',
    provider: 'device-a',
    upload_id,
    bytes: 100,
    status,
    received_at,
    started_at: received_at,
    finished_at: status === 'processing' ? null : received_at,
    bytes_read: 40,
    records_read: 3,
    records: { quantity: 3 },
    unchanged: 0,
    rejected: 0,
    error: status === 'failed' ? 'not a zip' : null,
    expires_at: null,
  };
  // Left out: a document a MongoDB read store kept from before the position was recorded.
  if (finished_position !== undefined) d.finished_position = finished_position;
  return d;
}

function uploadsContract(backend: string, makeReadStore: () => Promise<ReadStore>) {
  describe(`the Upload's status as the record views stand, on ${backend} (contracts §17)`, () => {
    let readStore: ReadStore;
    beforeAll(async () => {
      readStore = await makeReadStore();
      await readStore.ensureCollections(uploadsProjection.collections);
      const docs = [
        doc('done-early', 'done', 10, '2026-12-01T00:00:01.000Z'),
        doc('done-late', 'done', 30, '2026-12-01T00:00:02.000Z'),
        doc('failed-late', 'failed', 31, '2026-12-01T00:00:03.000Z'),
        doc('running', 'processing', NOT_FINISHED, '2026-12-01T00:00:04.000Z'),
        doc('queued', 'accepted', NOT_FINISHED, '2026-12-01T00:00:05.000Z'),
        doc('done-before-positions', 'done', undefined, '2026-12-01T00:00:00.000Z'),
      ];
      await readStore.applyChanges(docs.map((d) => ({ op: 'put' as const, collection: UPLOADS, doc: d })));
    });
    const at = (position: number) => async () => position;
    const ids = async (position: number, status?: UploadDoc['status']) =>
      (await listUploads(readStore, at(position), { userId: 'u1', ...(status ? { status } : {}) }, PAGE)).items.map((u) => `${u.upload_id}:${u.status}`);

    it('answers processing, with every byte read and no end, until the views passed the finishing event', async () => {
      expect(await getUpload(readStore, at(29), 'u1', 'device-a', 'done-late')).toMatchObject({ status: 'processing', finished_at: null, error: null, progress: { bytes_read: 100, bytes_total: 100, records_read: 3 } });
      expect(await getUpload(readStore, at(30), 'u1', 'device-a', 'done-late')).toMatchObject({ status: 'done', progress: null });
      expect(await getUpload(readStore, at(30), 'u1', 'device-a', 'failed-late')).toMatchObject({ status: 'processing', error: null });
      expect(await getUpload(readStore, at(31), 'u1', 'device-a', 'failed-late')).toMatchObject({ status: 'failed', error: 'not a zip' });
      // Ended before positions were recorded: long readable.
      expect(await getUpload(readStore, at(0), 'u1', 'device-a', 'done-before-positions')).toMatchObject({ status: 'done' });
    });

    it('lists every upload with the status it answers, newest first', async () => {
      expect(await ids(20)).toEqual(['queued:accepted', 'running:processing', 'failed-late:processing', 'done-late:processing', 'done-early:done', 'done-before-positions:done']);
    });

    it('filters on the status answered: processing includes what the views still apply, a final status only what they passed', async () => {
      expect(await ids(20, 'processing')).toEqual(['running:processing', 'failed-late:processing', 'done-late:processing']);
      expect(await ids(20, 'done')).toEqual(['done-early:done', 'done-before-positions:done']);
      expect(await ids(20, 'failed')).toEqual([]);
      expect(await ids(40, 'processing')).toEqual(['running:processing']);
      expect(await ids(40, 'done')).toEqual(['done-late:done', 'done-early:done', 'done-before-positions:done']);
      expect(await ids(40, 'failed')).toEqual(['failed-late:failed']);
      expect(await ids(40, 'accepted')).toEqual(['queued:accepted']);
    });
  });
}

uploadsContract('embedded SQLite', async () => new SqliteReadStore({ path: join(dir, `read-${++n}.sqlite`) }));
const url = inject('mongodbUrl');
if (url) uploadsContract('MongoDB', async () => MongoReadStore.connect({ url, database: `wellstream_uploads_${++n}` }));
else describe.skip('the Upload as the record views stand (MongoDB: no Docker engine or MONGODB_URL)', () => it('skipped', () => {}));
