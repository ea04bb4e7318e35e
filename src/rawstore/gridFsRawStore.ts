import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, type Db } from 'mongodb';
import { acquireMongoClient, type MongoHandle } from '../readstore/mongoConnection.js';
import { checkNamespace, parseRawKey, rawKey, RawObjectMissingError, type PutOptions, type RawObject, type RawStore } from './rawStore.js';

/**
 * Production raw store: MongoDB GridFS, one file per namespace and SHA-256 (the filename is the key). An upload that
 * failed half-way leaves an incomplete file that GridFS never lists as complete; `put` writes
 * with majority write concern so an acknowledged object survives a primary failover.
 */
export class GridFsRawStore implements RawStore {
  readonly kind = 'gridfs' as const;
  private readonly bucket: GridFSBucket;

  private constructor(
    private readonly handle: MongoHandle,
    db: Db,
  ) {
    this.bucket = new GridFSBucket(db, { bucketName: 'raw', writeConcern: { w: 'majority', journal: true } });
  }

  /** Shares the process's MongoClient with the read store (src/readstore/mongoConnection.ts). */
  static async connect(url: string, database: string): Promise<GridFsRawStore> {
    const handle = await acquireMongoClient(url);
    const db = handle.client.db(database);
    try {
      await ensureRawIndexes(db);
    } catch (err) {
      await handle.release();
      throw err;
    }
    return new GridFsRawStore(handle, db);
  }

  async put(data: Buffer, namespace: string, options: PutOptions = {}): Promise<RawObject> {
    const sha256 = options.sha256 ?? createHash('sha256').update(data).digest('hex');
    const key = rawKey(namespace, sha256);
    if (!(await this.exists(key))) {
      await new Promise<void>((resolve, reject) => {
        const up = this.bucket.openUploadStream(key, { metadata: { namespace, sha256, bytes: data.length } });
        up.once('finish', () => resolve());
        up.once('error', reject);
        up.end(data);
      });
    }
    return { key, sha256, bytes: data.length };
  }

  async putStream(data: Readable, namespace: string, options: Required<PutOptions>): Promise<RawObject> {
    const { sha256 } = options;
    const key = rawKey(namespace, sha256);
    if (await this.exists(key)) {
      data.destroy();
      return { key, sha256, bytes: await this.size(key) };
    }
    let bytes = 0;
    const up = this.bucket.openUploadStream(key, { metadata: { namespace, sha256 } });
    data.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(data, up);
    } catch (err) {
      await up.abort().catch(() => {});
      throw err;
    }
    return { key, sha256, bytes };
  }

  readRange(key: string, start: number, end: number): Readable {
    parseRawKey(key);
    if (end <= start) return Readable.from([]);
    return this.bucket.openDownloadStreamByName(key, { start, end });
  }

  async size(key: string): Promise<number> {
    const [file] = await this.bucket.find({ filename: parseRawKey(key) ? key : '' }).limit(1).toArray();
    if (!file) throw new RawObjectMissingError(`raw object ${key} is gone`);
    return file.length;
  }

  async get(key: string): Promise<Buffer> {
    parseRawKey(key);
    if (!(await this.exists(key))) throw new RawObjectMissingError(`raw object ${key} is gone`);
    const chunks: Buffer[] = [];
    for await (const chunk of this.bucket.openDownloadStreamByName(key)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.bucket.find({ filename: parseRawKey(key) ? key : '' }).limit(1).toArray()).length > 0;
  }

  async delete(key: string): Promise<void> {
    parseRawKey(key);
    for (const f of await this.bucket.find({ filename: key }).toArray()) await this.bucket.delete(f._id);
  }

  async deleteNamespace(namespace: string): Promise<void> {
    checkNamespace(namespace);
    for (const f of await this.bucket.find({ 'metadata.namespace': namespace }).toArray()) await this.bucket.delete(f._id);
  }

  async close(): Promise<void> {
    await this.handle.release();
  }

}

/**
 * Erasure finds a user's objects by `metadata.namespace`: without this index each erasure would
 * scan every file of every user. (GridFS makes its own filename index on first write.)
 */
export async function ensureRawIndexes(db: Db): Promise<void> {
  await db.collection('raw.files').createIndex({ 'metadata.namespace': 1 });
}
