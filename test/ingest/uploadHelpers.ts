import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createGzip, gzipSync } from 'node:zlib';
import type { InjectOptions } from 'fastify';
import type { NormalizedRecord, ParseItem, RejectedItem } from '../../commands/ingestion/records.js';
import { deviceParsers } from '../../src/sources/registry.js';
import { withinBounds } from '../../src/processes/etl/withinBounds.js';
import { buildGadgetbridgeExport } from '../fixtures/device-c/buildGadgetbridgeExport.js';
import { expectStatus, type Response, type TestApp } from '../support/server.js';

/**
 * Shared pieces of the upload tests (contracts.md §3): the fixtures as the devices send them,
 * hand-built multipart bodies, the upload call itself and a wait for the ETL queue.
 */

export const FIXTURE_A_NDJSON = readFileSync(fileURLToPath(new URL('../fixtures/device-a/healthkit-export.ndjson', import.meta.url)), 'utf8');
export const FIXTURE_B_JSON = readFileSync(fileURLToPath(new URL('../fixtures/device-b/upload.json', import.meta.url)));

export const fixtureA = (): Buffer => gzipSync(FIXTURE_A_NDJSON);
export const fixtureB = (): Buffer => Buffer.from(FIXTURE_B_JSON);
export const fixtureBGzip = (): Buffer => gzipSync(FIXTURE_B_JSON);
export const fixtureC = (): Buffer => buildGadgetbridgeExport();

export type Part = { name: string; filename?: string | null; contentType?: string | null; data: Buffer | string };

/** A multipart/form-data body built by hand (RFC 7578), so every detail of each part is the test's choice. */
export function multipart(parts: Part[], boundary = `----wellstream${randomBytes(8).toString('hex')}`): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const filename = p.filename === undefined ? 'export.ndjson.gz' : p.filename;
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${filename !== null ? `; filename="${filename}"` : ''}\r\n`;
    const type = p.contentType === undefined ? 'application/gzip' : p.contentType;
    if (type !== null) head += `Content-Type: ${type}\r\n`;
    chunks.push(Buffer.from(`${head}\r\n`), Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The device-a form: exactly one part, named file, application/gzip (contracts §3). */
export const deviceAForm = (gz: Buffer) => multipart([{ name: 'file', data: gz }]);

export type UploadRequest = { body: Buffer; contentType: string; headers?: Record<string, string> };

/** What each device slug sends for a payload (contracts §3). */
export function requestFor(slug: string, payload: Buffer, opts: { gzipEncoded?: boolean } = {}): UploadRequest {
  switch (slug) {
    case 'device-a':
      return deviceAForm(payload);
    case 'device-b':
      return { body: payload, contentType: 'application/json', ...(opts.gzipEncoded ? { headers: { 'content-encoding': 'gzip' } } : {}) };
    case 'device-c':
      return { body: payload, contentType: 'application/octet-stream' };
    default:
      throw new Error(`no request shape for ${slug}`);
  }
}

/** POST /v1/ingest/{slug} through app.inject. `uploadId: null` leaves the header out. */
export function postUpload(t: TestApp, slug: string, key: string | null, uploadId: string | null, req: UploadRequest): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': req.contentType, ...(req.headers ?? {}) };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  if (uploadId !== null) headers['upload-id'] = uploadId;
  const inject: InjectOptions = { method: 'POST', url: `/v1/ingest/${slug}`, headers, payload: req.body };
  return t.app.inject(inject);
}

export type Coverage = {
  pending_jobs: number;
  parked_jobs: number;
  rejected_records: number;
  truncated: boolean;
  days: { provider: string; date: string; records: number; metrics: Record<string, number>; last_synced_at: string }[];
};

export async function coverage(t: TestApp, apiKey: string, userId: string, query: Record<string, string> = { view: 'all' }): Promise<Coverage> {
  const res = await t.call('GET', `/v1/users/${userId}/coverage`, { key: apiKey, query });
  expectStatus(res, 200);
  return res.json() as Coverage;
}

/**
 * Waits until the user's ETL queue is empty (coverage pending_jobs = 0), then until every
 * projection has caught up with the log, so the record reads show the jobs' output.
 */
export async function waitForEtl(t: TestApp, apiKey: string, userId: string, timeoutMs = 60_000): Promise<Coverage> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const c = await coverage(t, apiKey, userId);
    if (c.pending_jobs === 0) {
      await t.ctx.projectors.waitForIdle();
      return coverage(t, apiKey, userId);
    }
    if (Date.now() > until) throw new Error(`ETL still has ${c.pending_jobs} pending jobs after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Waits until one Upload resource is final (contracts §12), then for the projectors: unlike
 * `waitForEtl`, it cannot return before the upload's acceptance reached the read models.
 */
export async function waitForUpload(t: TestApp, apiKey: string, userId: string, slug: string, uploadId: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.call('GET', `/v1/users/${userId}/uploads/${slug}/${uploadId}`, { key: apiKey });
    const status = res.statusCode === 200 ? (res.json() as { status: string }).status : undefined;
    if (status === 'done' || status === 'failed' || status === 'parked') {
      await t.ctx.projectors.waitForIdle();
      return;
    }
    if (Date.now() > until) throw new Error(`upload ${uploadId} is still ${status ?? 'unknown'} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every file under a directory, relative paths (the raw store's files under DATA_DIR/raw). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p, join(rel, n));
      else out.push(join(rel, n));
    }
  };
  walk(dir, '');
  return out.sort();
}

/** Runs the slug's own parser and the interval bounds over a payload, as the ETL does: the expectation of every read. */
export async function parsePayload(slug: string, payload: Buffer): Promise<{ records: NormalizedRecord[]; rejected: RejectedItem[] }> {
  const items: ParseItem[] = [];
  const receivedAt = new Date().toISOString();
  for await (const item of withinBounds(deviceParsers[slug]!.parse(payload, { provider: slug, receivedAt, dataType: null }), receivedAt)) items.push(item);
  return {
    records: items.flatMap((i) => ('record' in i ? [i.record] : [])),
    rejected: items.flatMap((i) => ('rejected' in i ? [i.rejected] : [])),
  };
}

/**
 * A gzip stream that inflates to `mebibytes` MiB of zeros, compressed while streaming so the
 * whole inflated size never sits in memory (a gzip bomb: ~2.7 MB of gzip for 600 MiB).
 */
export async function gzipOfZeros(mebibytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024);
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < mebibytes; i++) yield chunk;
      })(),
    ),
    createGzip({ level: 1 }),
    async function* (source: AsyncIterable<Buffer>) {
      for await (const c of source) out.push(c);
    },
  );
  return Buffer.concat(out);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
