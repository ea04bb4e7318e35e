import { exportContentsOf } from './apple-health/exportContents.js';
import { isZip, sniffAppleHealth } from './apple-health/sniff.js';
import { readHead } from './exportShared/byteSources.js';
import { messageOf, UnreadableExportError } from './exportShared/unreadableExport.js';
import { baseName, entriesListed, openZipArchive, type ArchiveEntry } from './exportShared/zipArchive.js';
import { FIT_SLUG } from './fit/fitDecoder.js';
import { fitHeaderProblem } from './fit/fitMessages.js';
import { FITBIT_TAKEOUT_SLUG } from './fitbit-takeout/fitbitTakeoutDecoder.js';
import { classify } from './fitbit-takeout/takeoutLayout.js';
import { databaseEntry, HEALTH_CONNECT_SLUG } from './health-connect/healthConnectDecoder.js';
import type { ByteSource } from './importSource.js';
import { claritySniff } from './dexcom-clarity/clarityColumns.js';
import { DEXCOM_CLARITY_SLUG } from './dexcom-clarity/clarityDecoder.js';
import { dataTypeOf } from './samsung-health/samsungFiles.js';
import { SAMSUNG_HEALTH_SLUG } from './samsung-health/samsungHealthDecoder.js';

/** Which import slug a file is (contracts §13), or why that cannot be told. */
export type FormatVerdict = { slug: string } | { unknown: string };

const APPLE_HEALTH_SLUG = 'apple-health';

/**
 * Each zip format, known by the entries its own decoder reads (the same functions, so a file told
 * as a format is one that format's decoder finds its data in).
 */
const ZIP_FORMATS: readonly (readonly [string, (entries: readonly ArchiveEntry[]) => boolean])[] = [
  [
    APPLE_HEALTH_SLUG,
    (entries) => {
      const { exportXml, ecgs } = exportContentsOf(entries);
      // The decoder also takes another .xml as a localised export.xml; telling the format from one would guess.
      return (exportXml !== null && baseName(exportXml.name).toLowerCase() === 'export.xml') || ecgs.length > 0;
    },
  ],
  [SAMSUNG_HEALTH_SLUG, (entries) => entries.some((e) => dataTypeOf(e) !== null)],
  [FIT_SLUG, (entries) => entries.some((e) => e.name.toLowerCase().endsWith('.fit'))],
  [
    FITBIT_TAKEOUT_SLUG,
    (entries) => {
      const { files, otherFitbitFiles } = classify(entries);
      return files.length > 0 || otherFitbitFiles > 0;
    },
  ],
  [
    HEALTH_CONNECT_SLUG,
    (entries) => {
      try {
        databaseEntry(entries);
        return true;
      } catch {
        return false;
      }
    },
  ],
];

/**
 * Tells an export's format from its first bytes and, for a zip, the names of its entries (its
 * central directory only: no entry is read). Used where a file arrives without a named format
 * (the CLI's `import` without `--provider`); the service itself always decodes as the slug named.
 */
export async function formatOf(source: ByteSource): Promise<FormatVerdict> {
  const head = await readHead(source, 64 * 1024);
  if (head.length === 0) return { unknown: 'the file is empty' };
  if (!isZip(head)) {
    // Not a zip: a FIT file (its header's ".FIT" signature, contracts §20), a Clarity CSV (its header
    // row), or apple-health's export.xml, or either of the last two gzip-compressed.
    if (fitHeaderProblem(head) === null) return { slug: FIT_SLUG };
    if (claritySniff(head) === null) return { slug: DEXCOM_CLARITY_SLUG };
    const problem = sniffAppleHealth(head);
    return problem === null ? { slug: APPLE_HEALTH_SLUG } : { unknown: `it is not a zip archive, a FIT file, a Dexcom Clarity CSV export or an Apple Health export.xml (${problem})` };
  }
  let entries: readonly ArchiveEntry[];
  let close = () => {};
  try {
    const zip = await openZipArchive(source, 'an export');
    entries = zip.entries;
    close = () => zip.close();
  } catch (err) {
    if (err instanceof UnreadableExportError) return { unknown: messageOf(err) };
    throw err;
  }
  try {
    const matches = ZIP_FORMATS.filter(([, holds]) => holds(entries)).map(([slug]) => slug);
    if (matches.length === 1) return { slug: matches[0]! };
    if (matches.length > 1) return { unknown: `the zip archive holds the files of several formats (${matches.join(', ')})` };
    return { unknown: `the zip archive holds none of the files the import formats are known by; it holds ${entriesListed(entries)}` };
  } finally {
    close();
  }
}
