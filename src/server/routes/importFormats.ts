import { bufferByteSource } from '../../sources/files/exportShared/byteSources.js';
import { openZipArchive } from '../../sources/files/exportShared/zipArchive.js';
import { messageOf } from '../../sources/files/exportShared/unreadableExport.js';
import { importDecoders } from '../../sources/registry.js';
import { problems } from '../problems.js';
import { untrustedFileChecks } from '../untrustedFileCheck.js';
import type { UploadFormat } from './uploadFormat.js';

/** contracts §13: how an export is sent in one request; the body's first bytes decide what it is. */
const IMPORT_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/xml', 'text/xml', 'application/gzip', 'application/x-gzip', 'application/octet-stream'] as const;
/** An export that is one CSV file (dexcom-clarity, contracts §17): the types a browser or curl gives a .csv. */
const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel', 'application/octet-stream'] as const;
const CSV_SLUGS: ReadonlySet<string> = new Set(['dexcom-clarity']);
/** contracts §20: a FIT file's own media type (a zip of them is sent as a zip). */
const FIT_TYPE = 'application/vnd.ant.fit';
/** How much of the body a decoder's sniff judges (contracts §12: "can be seen at the request"). */
export const SNIFF_BYTES = 64 * 1024;

const isZip = (b: Buffer) => b.length >= 4 && b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04;
const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

const BODIES: Readonly<Record<string, string>> = {
  'apple-health': "the Health app's export.zip, or the export.xml in it (either optionally gzip)",
  'health-connect': 'the zip Health Connect\'s "Export data" writes',
  'fitbit-takeout': 'a Google Takeout zip of Fitbit data',
  'samsung-health': 'the zip of CSV files Samsung Health\'s "Download personal data" writes',
  'dexcom-clarity': 'the CSV file Dexcom Clarity exports',
  fit: 'a FIT file of a sport device (.fit), or a zip of .fit files',
};

const DECODERS = importDecoders('');

/**
 * Why a body whose first bytes are `head` (up to SNIFF_BYTES of them, or the whole body) cannot be
 * the export `slug` names, as a 422's detail; null when it may be. Single requests and resumable
 * uploads (tusUploads.ts) are judged alike.
 */
export function importHeadProblem(slug: string, head: Buffer): string | null {
  const decoder = DECODERS[slug];
  const problem = decoder ? decoder.sniff(head.subarray(0, SNIFF_BYTES)) : null;
  return problem ? `this is not ${BODIES[slug] ?? `a ${slug} export`}: ${problem}` : null;
}

function importFormat(slug: string): UploadFormat {
  const csv = CSV_SLUGS.has(slug);
  const file = slug === 'apple-health' ? 'export.zip' : csv ? `${slug}.csv` : slug === 'fit' ? 'activity.fit' : `${slug}.zip`;
  const other = slug === 'fit' ? FIT_TYPE : 'application/xml';
  return {
    body: BODIES[slug] ?? `a ${slug} export`,
    rawTypes: csv ? CSV_TYPES : slug === 'fit' ? [...IMPORT_TYPES, FIT_TYPE] : IMPORT_TYPES,
    multipart: null,
    judge: async (body) => {
      const problem = importHeadProblem(slug, body);
      if (problem) throw problems.unprocessable(problem);
      if (isZip(body)) {
        // A zip whose central directory cannot be read is unreadable as a whole: say so now, keep nothing.
        try {
          (await openZipArchive(bufferByteSource(body), BODIES[slug] ?? slug)).close();
        } catch (err) {
          throw problems.unprocessable(messageOf(err));
        }
        // contracts §18: the database inside is refused at the request like device-c's, in a process killed at a deadline.
        if (slug === 'health-connect') {
          const refusal = await untrustedFileChecks.check('health-connect', body);
          if (refusal) throw problems.unprocessable(`this is not ${BODIES[slug]} that can be read: ${refusal}`);
        }
      }
      return { payload: body, contentType: csv ? 'text/csv' : isZip(body) ? 'application/zip' : isGzip(body) ? 'application/gzip' : other };
    },
    example: (origin) =>
      `curl -s -X POST ${origin}/v1/ingest/${slug} -H "Authorization: Bearer $TOKEN" -H 'Upload-Id: ${slug}-1' -H 'Content-Type: ${csv ? 'text/csv' : slug === 'fit' ? FIT_TYPE : 'application/zip'}' --data-binary @${file}`,
  };
}

/** The import slugs as upload formats of `POST /v1/ingest/{slug}` (up to 50 MiB; larger ones by resumable upload). */
export const IMPORT_UPLOAD_FORMATS: Readonly<Record<string, UploadFormat>> = Object.fromEntries(
  Object.keys(DECODERS).map((slug) => [slug, importFormat(slug)]),
);
