import { createHash } from 'node:crypto';
import { GridFSBucket, MongoClient, type Db } from 'mongodb';
import { RawObjectMissingError, type RawObject, type RawStore } from './rawStore.js';

/**
 * Production raw store: MongoDB GridFS, one file per SHA-256 (the filename). An upload that
 * failed half-way leaves an incomplete file that GridFS never lists as complete; `put` writes
 * with majority write concern so an acknowledged object survives a primary failover.
 */
export class GridFsRawStore implements RawStore {
  readonly kind = 'gridfs' as const;
  private readonly bucket: GridFSBucket;

  private constructor(
    private readonly client: MongoClient,
    db: Db,
  ) {
    this.bucket = new GridFSBucket(db, { bucketName: 'raw', writeConcern: { w: 'majority', journal: true } });
  }

  static async connect(url: string, database: string): Promise<GridFsRawStore> {
    const client = await new MongoClient(url).connect();
    return new GridFsRawStore(client, client.db(database));
  }

  async put(data: Buffer): Promise<RawObject> {
    const sha256 = createHash('sha256').update(data).digest('hex');
    const key = `sha256/${sha256}`;
    if (!(await this.exists(key))) {
      await new Promise<void>((resolve, reject) => {
        const up = this.bucket.openUploadStream(sha256, { metadata: { sha256, bytes: data.length } });
        up.once('finish', () => resolve());
        up.once('error', reject);
        up.end(data);
      });
    }
    return { key, sha256, bytes: data.length };
  }

  async get(key: string): Promise<Buffer> {
    const sha = this.shaOf(key);
    if (!(await this.exists(key))) throw new RawObjectMissingError(`raw object ${key} is gone`);
    const chunks: Buffer[] = [];
    for await (const chunk of this.bucket.openDownloadStreamByName(sha)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async exists(key: string): Promise<boolean> {
    return (await this.bucket.find({ filename: this.shaOf(key) }).limit(1).toArray()).length > 0;
  }

  async delete(key: string): Promise<void> {
    for (const f of await this.bucket.find({ filename: this.shaOf(key) }).toArray()) await this.bucket.delete(f._id);
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private shaOf(key: string): string {
    const m = /^sha256\/([0-9a-f]{64})$/.exec(key);
    if (!m) throw new Error(`invalid raw object key ${key}`);
    return m[1]!;
  }
}
