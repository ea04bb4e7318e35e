import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { inflateSmallGzip } from '../../sources/shared/gunzipChunks.js';
import { HttpProblem, problems } from '../problems.js';
import { untrustedFileChecks } from '../untrustedFileCheck.js';
import { IMPORT_UPLOAD_FORMATS } from './importFormats.js';

const MiB = 1024 * 1024;
/** contracts.md §3: the compressed body and what it inflates to (413 above either). */
export const UPLOAD_LIMITS = { compressedBytes: 50 * MiB, decompressedBytes: 512 * MiB } as const;

/** What `curl --data-binary @file` sends when no Content-Type is given. */
export const CURL_DEFAULT_TYPE = 'application/x-www-form-urlencoded';
const GZIP_TYPES = ['application/gzip', 'application/x-gzip'] as const;
const SQLITE_MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');

export type { JudgedBody, UploadFormat } from './uploadFormat.js';
import type { UploadFormat } from './uploadFormat.js';

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

/** A JSON object's first byte, after an optional UTF-8 byte order mark and whitespace. */
function startsAsJsonObject(b: Buffer): boolean {
  let i = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
  while (i < b.length && (b[i] === 0x20 || b[i] === 0x09 || b[i] === 0x0a || b[i] === 0x0d)) i++;
  return b[i] === 0x7b;
}

const curlBase = (origin: string, slug: string, uploadId: string) =>
  `curl -s -X POST ${origin}/v1/ingest/${slug} -H "Authorization: Bearer $TOKEN" -H 'Upload-Id: ${uploadId}'`;

export const UPLOAD_FORMATS: Readonly<Record<string, UploadFormat>> = {
  'device-a': {
    body: 'a gzip of HealthKit NDJSON lines',
    rawTypes: [...GZIP_TYPES, 'application/octet-stream', CURL_DEFAULT_TYPE],
    multipart: { field: 'file', partTypes: [...GZIP_TYPES, 'application/octet-stream'] },
    judge: async (body) => {
      if (!isGzip(body)) throw problems.unprocessable('device-a uploads are a gzip of HealthKit NDJSON lines; this body does not start as gzip does');
      await checkGzip(body);
      return { payload: body, contentType: 'application/gzip' };
    },
    example: (origin) => `${curlBase(origin, 'device-a', 'export-1')} -F 'file=@export.ndjson.gz;type=application/gzip'`,
  },
  'device-b': {
    body: 'Health Connect JSON {"records":[…]}, optionally gzip',
    rawTypes: ['application/json', 'text/plain', ...GZIP_TYPES, CURL_DEFAULT_TYPE],
    multipart: null,
    judge: async (body, { type, contentEncoding }) => {
      if (contentEncoding !== 'identity' && contentEncoding !== 'gzip') throw new HttpProblem(415, 'Content-Encoding must be gzip or absent');
      if (contentEncoding === 'gzip' || isGzip(body)) {
        await checkGzip(body);
        return { payload: body, contentType: 'application/json+gzip' };
      }
      // application/json says what the body is; any other type is judged by the body's first bytes.
      if (type !== 'application/json' && !startsAsJsonObject(body)) {
        throw problems.unprocessable(`device-b uploads are Health Connect JSON {"records":[…]}, optionally gzip; this ${type} body is neither`);
      }
      return { payload: body, contentType: 'application/json' };
    },
    example: (origin) => `${curlBase(origin, 'device-b', 'hc-1')} -H 'Content-Type: application/json' --data-binary @upload.json`,
  },
  'device-c': {
    body: "a Gadgetbridge database export (the app's SQLite file)",
    rawTypes: ['application/octet-stream', 'application/vnd.sqlite3', 'application/x-sqlite3', CURL_DEFAULT_TYPE],
    multipart: null,
    judge: async (body) => {
      if (body.length < SQLITE_MAGIC.length || !body.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
        throw problems.unprocessable('device-c uploads are Gadgetbridge SQLite database exports; this body does not start with the SQLite header');
      }
      // contracts §12, §18: a database failing its integrity check, or whose schema would run the
      // sender's SQL, is refused at the request; opened in a process killed at a deadline, never here.
      const refusal = await untrustedFileChecks.check('device-c', body);
      if (refusal) throw problems.unprocessable(`device-c: ${refusal}`);
      return { payload: body, contentType: 'application/vnd.sqlite3' };
    },
    example: (origin) => `${curlBase(origin, 'device-c', 'band-1')} -H 'Content-Type: application/vnd.sqlite3' --data-binary @Gadgetbridge.db`,
  },
  ...IMPORT_UPLOAD_FORMATS,
};

/** The media type of a Content-Type header without its parameters, lower case ('' when absent). */
export function mediaTypeOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function takesType(format: UploadFormat, type: string): boolean {
  return format.rawTypes.includes(type) || (format.multipart !== null && type === 'multipart/form-data');
}

const typeLabel = (t: string) => (t === CURL_DEFAULT_TYPE ? `${t} (curl --data-binary's default)` : t);
const orList = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/** 415 for a request of a type the route does not take: which types it takes, and a curl line that works (contracts §12). */
export function unsupportedMediaType(slug: string, format: UploadFormat, type: string, origin: string): HttpProblem {
  const takes = format.rawTypes.map(typeLabel);
  if (format.multipart) takes.unshift(`multipart/form-data with one file part named ${format.multipart.field} (${format.multipart.partTypes.join(', ')})`);
  const got = type === '' ? 'the request has no Content-Type' : `not ${type}`;
  return new HttpProblem(415, `${slug} takes ${orList(takes)}, holding ${format.body}; ${got}. For example: ${format.example(origin)}`);
}

/** 415 for a multipart file part of a type the format does not take. */
export function unsupportedPartType(slug: string, format: UploadFormat, partType: string, origin: string): HttpProblem {
  const parts = format.multipart?.partTypes ?? [];
  return new HttpProblem(415, `the ${slug} file part must be ${orList(parts)}, holding ${format.body}; not ${partType}. For example: ${format.example(origin)}`);
}

/** Inflates without keeping the output, to refuse a corrupt stream or a gzip bomb before anything is stored. */
async function checkGzip(data: Buffer): Promise<void> {
  try {
    if (inflateSmallGzip(data)) return;
  } catch {
    throw problems.unprocessable('the payload is not valid gzip');
  }
  let total = 0;
  const counter = new Writable({
    write(chunk: Buffer, _enc, cb) {
      total += chunk.length;
      cb(total > UPLOAD_LIMITS.decompressedBytes ? new HttpProblem(413, 'the upload inflates to more than 512 MiB') : null);
    },
  });
  try {
    await pipeline(Readable.from([data]), createGunzip(), counter);
  } catch (err) {
    if (err instanceof HttpProblem) throw err;
    throw problems.unprocessable('the payload is not valid gzip');
  }
}
