import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { checkNamespace, parseRawKey, rawKey, RawObjectMissingError, type PutOptions, type RawObject, type RawStore } from './rawStore.js';

/**
 * Embedded raw store: `DATA_DIR/raw/<namespace>/ab/abcdef…` by SHA-256. Written to a temporary file,
 * fsynced, renamed into place and the directory fsynced: a crash leaves either the whole object
 * or nothing, and the same content is stored once.
 */
export class FileRawStore implements RawStore {
  readonly kind = 'file' as const;

  constructor(private readonly root: string) {}

  async put(data: Buffer, namespace: string, options: PutOptions = {}): Promise<RawObject> {
    const sha256 = options.sha256 ?? createHash('sha256').update(data).digest('hex');
    const key = rawKey(namespace, sha256);
    const path = this.pathOf(key);
    const dir = join(path, '..');
    if (await this.exists(key)) return { key, sha256, bytes: data.length };
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.${sha256}.${randomUUID()}.tmp`);
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await this.settle(tmp, path, dir);
    return { key, sha256, bytes: data.length };
  }

  async putStream(data: Readable, namespace: string, options: Required<PutOptions>): Promise<RawObject> {
    const { sha256 } = options;
    const key = rawKey(namespace, sha256);
    const path = this.pathOf(key);
    const dir = join(path, '..');
    if (await this.exists(key)) {
      data.destroy();
      return { key, sha256, bytes: await this.size(key) };
    }
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.${sha256}.${randomUUID()}.tmp`);
    try {
      await pipeline(data, createWriteStream(tmp, { flags: 'wx', mode: 0o600 }));
      const fh = await open(tmp, 'r+');
      try {
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    await this.settle(tmp, path, dir);
    return { key, sha256, bytes: await this.size(key) };
  }

  /** Moves a synced temporary file into place and syncs the directory: the object is whole or absent. */
  private async settle(tmp: string, path: string, dir: string): Promise<void> {
    await rename(tmp, path);
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  }

  readRange(key: string, start: number, end: number): Readable {
    // createReadStream's end is inclusive, and an empty range must still end.
    if (end <= start) return Readable.from([]);
    return createReadStream(this.pathOf(key), { start, end: end - 1, highWaterMark: 256 * 1024 });
  }

  async size(key: string): Promise<number> {
    try {
      return (await stat(this.pathOf(key))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RawObjectMissingError(`raw object ${key} is gone`);
      throw err;
    }
  }

  async get(key: string): Promise<Buffer> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RawObjectMissingError(`raw object ${key} is gone`);
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await stat(this.pathOf(key));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async deleteNamespace(namespace: string): Promise<void> {
    await rm(join(this.root, checkNamespace(namespace)), { recursive: true, force: true });
  }

  async close(): Promise<void> {}

  private pathOf(key: string): string {
    const { namespace, sha256 } = parseRawKey(key);
    return join(this.root, namespace, sha256.slice(0, 2), sha256);
  }
}
