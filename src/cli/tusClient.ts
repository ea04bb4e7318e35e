import { open } from 'node:fs/promises';
import { SERVICE_URL_VARIABLE } from '../shared/serviceUrl.js';
import { unreachableReason } from '../shared/unreachable.js';
import { CliError } from './shared.js';

/** One PATCH carries at most this much: a dropped connection costs at most one part. */
const PART = 8 * 1024 * 1024;
const ATTEMPTS = 8;
const TUS = { 'tus-resumable': '1.0.0' };

export type TusUpload = { origin: string; token: string; path: string; size: number; metadata: Record<string, string> };

const encodeMetadata = (m: Record<string, string>) => Object.entries(m).map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`).join(',');

async function problemOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const p = JSON.parse(text) as { detail?: string; title?: string };
    return `${res.status} ${p.detail ?? p.title ?? text}`;
  } catch {
    return `${res.status} ${text}`.trim();
  }
}

/** The one-line refusal for a service that cannot be reached at all (nothing was sent yet). */
function unreachableError(origin: string, err: unknown): CliError | null {
  const reason = unreachableReason(err);
  return reason === null ? null : new CliError(`cannot reach the service at ${origin}: ${reason}; is it running? set --url or ${SERVICE_URL_VARIABLE}`);
}

/**
 * Uploads a file by tus 1.0 (contracts §13): creates the upload (the same upload_id again finds
 * the one begun before), asks the stored offset with HEAD and sends the rest in parts; a dropped
 * connection or a server restart is met by asking the offset again and going on from there.
 */
export async function tusUpload(u: TusUpload, onProgress: (sent: number) => void): Promise<string> {
  const auth = { ...TUS, authorization: `Bearer ${u.token}` };
  let created: Response;
  try {
    created = await fetch(`${u.origin}/v1/uploads/tus`, { method: 'POST', headers: { ...auth, 'upload-length': String(u.size), 'upload-metadata': encodeMetadata(u.metadata) } });
  } catch (err) {
    throw unreachableError(u.origin, err) ?? err;
  }
  if (created.status !== 201 && created.status !== 200) throw new CliError(`the upload could not be created: ${await problemOf(created)}`);
  const location = new URL(created.headers.get('location')!, u.origin).toString();
  const fh = await open(u.path, 'r');
  try {
    let failures = 0;
    for (;;) {
      const head = await fetch(location, { method: 'HEAD', headers: auth }).catch(() => null);
      if (!head || !head.ok) {
        if (head && head.status < 500) throw new CliError(`the upload cannot be resumed: HEAD answered ${head.status}`);
        if (++failures > ATTEMPTS) throw new CliError(`the service at ${u.origin} did not answer; run the same command again to resume`);
        await new Promise((r) => setTimeout(r, 500 * failures));
        continue;
      }
      let offset = Number(head.headers.get('upload-offset'));
      onProgress(offset);
      if (offset >= u.size) return location;
      try {
        while (offset < u.size) {
          const part = Buffer.alloc(Math.min(PART, u.size - offset));
          await fh.read(part, 0, part.length, offset);
          const res = await fetch(location, { method: 'PATCH', headers: { ...auth, 'upload-offset': String(offset), 'content-type': 'application/offset+octet-stream' }, body: part });
          if (res.status !== 204) {
            // 409: another offset is stored (ask again); 423: another request holds the upload (its lock lasts LEASE_MS at most once it stops).
            if (res.status < 500 && res.status !== 409 && res.status !== 423) throw new CliError(`the upload was refused: ${await problemOf(res)}`);
            throw new Error(`retry: ${res.status}`);
          }
          offset = Number(res.headers.get('upload-offset'));
          failures = 0;
          onProgress(offset);
        }
        return location;
      } catch (err) {
        if (err instanceof CliError) throw err;
        // Dropped: ask the service how much it kept, and go on from there.
        if (++failures > ATTEMPTS) throw new CliError(`the service at ${u.origin} stopped answering (${unreachableReason(err) ?? (err instanceof Error ? err.message : String(err))}); run the same command again to resume`);
        await new Promise((r) => setTimeout(r, 500 * failures));
      }
    }
  } finally {
    await fh.close();
  }
}
