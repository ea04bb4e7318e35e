import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdir, open, opendir, readFile, rename, rm, rmdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';

/**
 * Where a resumable upload's bytes wait until the last one arrives (contracts §13, tus), sealed
 * like the raw store's objects: each full chunk of CHUNK bytes is sealed on its own and appended to
 * `chunks` (fsynced before the offset is told), the partial tail is sealed into `tail` and replaced
 * atomically. The offset is what is durably there: whole chunks plus a tail whose chunk number
 * matches (a tail left from before its chunk was completed is stale and ignored). A dropped
 * connection keeps every byte that arrived; a crash keeps every byte that was acknowledged.
 */
const CHUNK = 1024 * 1024;
const IV = 12;
const TAG = 16;
const STRIDE = CHUNK + IV + TAG;

export type StagingKey = { key: Buffer; keyId: string };

/** `plain` sealed, as the parts to write one after the other: IV, tag, ciphertext (not joined: a chunk is a MiB). */
function sealed(k: StagingKey, aad: string, plain: Buffer): Buffer[] {
  const iv = randomBytes(IV);
  const c = createCipheriv('aes-256-gcm', k.key, iv);
  c.setAAD(Buffer.from(`${k.keyId}\u0000${aad}`));
  const ct = c.update(plain);
  // GCM is a stream mode: `final` adds no bytes, it only computes the tag.
  c.final();
  return [iv, c.getAuthTag(), ct];
}

function seal(k: StagingKey, aad: string, plain: Buffer): Buffer {
  return Buffer.concat(sealed(k, aad, plain));
}

function unseal(k: StagingKey, aad: string, sealed: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', k.key, sealed.subarray(0, IV));
  d.setAAD(Buffer.from(`${k.keyId}\u0000${aad}`));
  d.setAuthTag(sealed.subarray(IV, IV + TAG));
  return Buffer.concat([d.update(sealed.subarray(IV + TAG)), d.final()]);
}

export class UploadTooLongError extends Error {}

/** The upload's lock as its writer holds it (src/processes/uploads/uploadLocks.ts): aborted once lost; `confirm` throws when lost. */
export type WriterHold = { signal: AbortSignal; confirm(): Promise<void> };

/** Where a service's resumable uploads are staged under its DATA_DIR. */
export const stagingRoot = (dataDir: string) => join(dataDir, 'tus');

/** One staged upload's folder as the sweep meets it: its user, and when bytes last arrived. */
export type StagedDir = { userId: string; path: string; lastWrite: number };

export class UploadStaging {
  constructor(private readonly root: string) {}

  private dirOf(userId: string, stream: string): string {
    return join(this.root, userId, createHash('sha256').update(stream).digest('hex').slice(0, 32));
  }

  /**
   * Whole chunks stored and the tail's bytes: the offset to resume from. A part of a chunk past
   * the whole ones is either a chunk a PATCH is writing at this moment or one a crash cut short;
   * only `repair` (the writer, under the upload's lock: nobody else is writing) cuts it off. A
   * reader (HEAD, issue 34 §6) counts the whole chunks and changes nothing.
   */
  private async state(dir: string, k: StagingKey, repair = false): Promise<{ chunks: number; tail: Buffer }> {
    let size = 0;
    try {
      size = (await stat(join(dir, 'chunks'))).size;
    } catch {
      return { chunks: 0, tail: Buffer.alloc(0) };
    }
    const chunks = Math.floor(size / STRIDE);
    // A chunk cut short by a crash was never acknowledged: the next writer drops it.
    if (repair && size % STRIDE !== 0) await truncate(join(dir, 'chunks'), chunks * STRIDE);
    let tail: Buffer = Buffer.alloc(0);
    try {
      const raw = await readFile(join(dir, 'tail'));
      const index = raw.readUInt32BE(0);
      if (index === chunks) tail = unseal(k, `tail\u0000${index}`, raw.subarray(4));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return { chunks, tail };
  }

  /** What is durably staged; never changes a file (safe beside a running PATCH). */
  async offset(userId: string, stream: string, k: StagingKey): Promise<number> {
    const s = await this.state(this.dirOf(userId, stream), k);
    return s.chunks * CHUNK + s.tail.length;
  }

  /**
   * Appends what `body` brings, up to `length` in all; answers the new offset. Whatever arrived
   * before the body ended or broke off is stored; more than `length` is UploadTooLongError. The
   * caller holds the upload's lock; once it is lost (`held` aborted, or not confirmed before the
   * tail is swapped in) nothing more is written, and the reason is thrown.
   */
  async append(userId: string, stream: string, k: StagingKey, body: AsyncIterable<Buffer>, length: number, held?: WriterHold): Promise<number> {
    const dir = this.dirOf(userId, stream);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const { chunks: n0, tail } = await this.state(dir, k, true);
    let n = n0;
    // The bytes past the whole chunks, as the parts that brought them: joined once a chunk is full,
    // not at every part (a 200 MiB upload arrives in 64 KiB parts: joining at each copied every
    // chunk's bytes ~8 times, 1.6 s of the HTTP thread's CPU per 200 MiB).
    let parts: Buffer[] = tail.length ? [tail] : [];
    let pending = tail.length;
    const fh = await open(join(dir, 'chunks'), 'a', 0o600);
    let failure: unknown = null;
    try {
      for await (const part of body) {
        held?.signal.throwIfAborted();
        if (n * CHUNK + pending + part.length > length) throw new UploadTooLongError(`more bytes than the Upload-Length of ${length}`);
        parts.push(part);
        pending += part.length;
        if (pending < CHUNK) continue;
        const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, pending);
        let at = 0;
        for (; pending - at >= CHUNK; at += CHUNK) {
          await fh.writev(sealed(k, `chunk\u0000${n}`, joined.subarray(at, at + CHUNK)));
          n++;
        }
        // The rest copied out: a part from the request's stream is not kept beyond it.
        parts = at < pending ? [Buffer.from(joined.subarray(at, pending))] : [];
        pending -= at;
      }
    } catch (err) {
      failure = err;
    } finally {
      await fh.sync();
      await fh.close();
    }
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, pending);
    // The tail replaces what the holder before left: only the holder may, so it asks the store once more.
    await held?.confirm();
    // The tail is rewritten whole and swapped in: a crash leaves the old one or the new one.
    const header = Buffer.alloc(4);
    header.writeUInt32BE(n);
    const tmp = join(dir, `.tail.${randomUUID()}`);
    const th = await open(tmp, 'w', 0o600);
    try {
      await th.writeFile(Buffer.concat([header, seal(k, `tail\u0000${n}`, buf)]));
      await th.sync();
    } finally {
      await th.close();
    }
    await rename(tmp, join(dir, 'tail'));
    const dh = await open(dir, 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
    if (failure instanceof UploadTooLongError) throw failure;
    return n * CHUNK + buf.length;
  }

  /** The staged bytes in order, opened chunk by chunk. */
  read(userId: string, stream: string, k: StagingKey): Readable {
    const dir = this.dirOf(userId, stream);
    const self = this;
    async function* bytes(): AsyncGenerator<Buffer> {
      const { chunks, tail } = await self.state(dir, k);
      if (chunks > 0) {
        const fh = await open(join(dir, 'chunks'), 'r');
        try {
          const sealed = Buffer.alloc(STRIDE);
          for (let i = 0; i < chunks; i++) {
            await fh.read(sealed, 0, STRIDE, i * STRIDE);
            yield unseal(k, `chunk\u0000${i}`, sealed);
          }
        } finally {
          await fh.close();
        }
      }
      if (tail.length) yield tail;
    }
    return Readable.from(bytes(), { objectMode: false });
  }

  async remove(userId: string, stream: string): Promise<void> {
    await rm(this.dirOf(userId, stream), { recursive: true, force: true });
  }

  /**
   * When bytes of the upload last arrived (the newest of its folder's and files' modification
   * times: `chunks` grows while a PATCH runs, `tail` is swapped in at its end); null when nothing
   * is staged.
   */
  async lastWrite(userId: string, stream: string): Promise<number | null> {
    return lastWriteOf(this.dirOf(userId, stream));
  }

  /**
   * The staged folders in the order the file system lists them, each user's after the other's:
   * at most `limit` of them, after passing over the first `skip` (a sweep's place in the walk).
   * Folders of users left with none are removed on the way.
   */
  async *walk(skip: number, limit: number): AsyncGenerator<StagedDir> {
    let seen = 0;
    let root;
    try {
      root = await opendir(this.root);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    try {
      for await (const user of root) {
        if (!user.isDirectory()) continue;
        const userDir = join(this.root, user.name);
        let uploads = 0;
        for await (const upload of await opendir(userDir)) {
          uploads++;
          if (seen++ < skip) continue;
          if (seen > skip + limit) return;
          const path = join(userDir, upload.name);
          const lastWrite = await lastWriteOf(path);
          if (lastWrite !== null) yield { userId: user.name, path, lastWrite };
        }
        // An empty folder is removed only if still empty (an upload may have just begun in it).
        if (uploads === 0) await rmdir(userDir).catch(() => {});
      }
    } finally {
      await root.close().catch(() => {});
    }
  }

  /** Removes a folder `walk` answered (its upload long gone). */
  async removeDir(path: string): Promise<void> {
    if (!path.startsWith(this.root)) throw new Error(`${path} is not a staged upload`);
    await rm(path, { recursive: true, force: true });
  }
}

async function lastWriteOf(dir: string): Promise<number | null> {
  let newest: number | null = null;
  for (const p of [dir, join(dir, 'chunks'), join(dir, 'tail')]) {
    try {
      const m = (await stat(p)).mtimeMs;
      if (newest === null || m > newest) newest = m;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return newest;
}
