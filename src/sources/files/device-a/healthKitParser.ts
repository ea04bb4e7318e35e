import { StringDecoder } from 'node:string_decoder';
import type { DeviceParser, MenstrualCycleRecord, ParseItem, SleepSessionRecord } from '../../../../commands/ingestion/records.js';
import { gunzipChunks, GzipError } from '../../shared/gunzipChunks.js';
import { isObject, RecordError, type Json } from '../../shared/recordError.js';
import { correlationLine } from './correlationLines.js';
import { excerptOf, fail } from './lineFields.js';
import { menstrualCycles, sleepSessions } from './nightsAndCycles.js';
import { categoryLine, quantityLine } from './sampleLines.js';
import { ecgLine, heartbeatLine } from './seriesLines.js';
import { Upload } from './upload.js';
import { workoutLine } from './workoutLine.js';
import { UnreadableExportError } from '../exportShared/unreadableExport.js';

/**
 * device-a: iOS HealthKit uploads (contracts.md §3). The payload is gzip of NDJSON, one object per
 * line, in HealthKit's own names (HKQuantitySample, HKCategorySample, HKWorkout,
 * HKElectrocardiogram, HKHeartbeatSeriesSample, HKCorrelation; property names in snake_case).
 * The line shapes are documented in docs/formats/device-a.md.
 *
 * The parser streams: gunzip → line split → JSON.parse per line → one record (or rejected item)
 * per line, yielded at once. Only sleep-analysis and menstrual-flow samples are remembered (as
 * small tuples), because sleep sessions and cycles need the whole upload; they come at the end.
 *
 * The parts: healthKitDates.ts reads HealthKit's dates; lineFields.ts the fields every line has;
 * vocabulary.ts holds HealthKit's names and the service's; unitMapping.ts brings quantities to
 * storage units; upload.ts is what one upload remembers; sampleLines.ts, workoutLine.ts,
 * seriesLines.ts and correlationLines.ts map each line kind; nightsAndCycles.ts makes the records
 * of the whole upload with the shared derivations (src/sources/derivations/).
 */

/** A line longer than this is rejected without being assembled (an ECG line is ~150 KB). */
const MAX_LINE_CHARS = 32 * 1024 * 1024;

function rejected(lineNo: number, reason: string, line: string): ParseItem {
  return { rejected: { location: `line ${lineNo}`, reason, excerpt: excerptOf(line) } };
}

/** `seen.objects` counts the lines that are JSON objects (whatever their records' fate). */
function parseLine(up: Upload, raw: string, lineNo: number, seen: { objects: number }): ParseItem | ParseItem[] | undefined {
  let line = raw;
  if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
  if (lineNo === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  if (line.length === 0) return undefined;
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    if (line.trim() === '') return undefined;
    return rejected(lineNo, 'line is not valid JSON', line);
  }
  if (!isObject(o)) return rejected(lineNo, 'line is not a JSON object', line);
  seen.objects++;
  try {
    return healthKitObjectItems(up, o);
  } catch (err) {
    if (err instanceof RecordError) return rejected(lineNo, err.message, line);
    throw err;
  }
}

/**
 * The record(s) of one HealthKit object in device-a's line shape; throws RecordError (the reason)
 * for an object that cannot be stored. Sleep and flow samples are also remembered in `up`. The
 * Health app's export.xml maps its elements to these objects and comes through here too.
 */
export function healthKitObjectItems(up: Upload, o: Json): ParseItem | ParseItem[] {
  switch (o.kind) {
    case 'quantity':
      return { record: quantityLine(up, o) };
    case 'category':
      return { record: categoryLine(up, o) };
    case 'workout':
      return { record: workoutLine(up, o) };
    case 'ecg':
      return { record: ecgLine(up, o) };
    case 'heartbeat_series':
      return { record: heartbeatLine(up, o) };
    case 'correlation':
      return correlationLine(up, o);
    case undefined:
      return fail('missing kind');
    default:
      return fail(`unknown kind ${JSON.stringify(o.kind)}`);
  }
}

/** The records that need the whole upload, after its last object: sleep sessions, then menstrual cycles. */
export function* wholeUploadRecords(up: Upload): Generator<SleepSessionRecord | MenstrualCycleRecord> {
  yield* sleepSessions(up.sleep);
  yield* menstrualCycles(up.flow);
}

async function* parseHealthKit(payload: Buffer, provider: string): AsyncGenerator<ParseItem> {
  const up = new Upload(provider);
  const decoder = new StringDecoder('utf8');
  let parts: string[] = [];
  let partsLen = 0;
  /** Set while skipping the rest of a line longer than MAX_LINE_CHARS (parts then hold its excerpt). */
  let oversized = false;
  let lineNo = 0;
  const seen = { objects: 0 };

  function takeLine(last: string): { line: string; tooLong: boolean } {
    const tooLong = oversized;
    const line = parts.length === 0 ? last : tooLong ? parts.join('') : (parts.push(last), parts.join(''));
    parts = [];
    partsLen = 0;
    oversized = false;
    return { line, tooLong };
  }
  const tooLongItem = (line: string) => rejected(lineNo, `line is longer than ${MAX_LINE_CHARS} characters`, line);

  let broken: string | null = null;
  try {
    for await (const chunk of gunzipChunks(payload)) {
      const text = decoder.write(chunk);
      let pos = 0;
      let nl = text.indexOf('\n');
      while (nl !== -1) {
        const { line, tooLong } = takeLine(text.slice(pos, nl));
        lineNo++;
        // Inline rather than a helper generator: this loop runs once per line.
        const out = tooLong ? tooLongItem(line) : parseLine(up, line, lineNo, seen);
        if (Array.isArray(out)) for (const item of out) yield item;
        else if (out !== undefined) yield out;
        pos = nl + 1;
        nl = text.indexOf('\n', pos);
      }
      if (pos < text.length && !oversized) {
        parts.push(pos === 0 ? text : text.slice(pos));
        partsLen += text.length - pos;
        if (partsLen > MAX_LINE_CHARS) {
          parts = [excerptOf(parts.join(''))];
          oversized = true;
        }
      }
    }
  } catch (err) {
    if (!(err instanceof GzipError)) throw err;
    broken = err.message;
  }
  if (broken !== null) {
    // Not gzip, or cut short: what came before is kept; the broken rest is one rejected item.
    const { line } = takeLine(decoder.end());
    lineNo++;
    yield { rejected: { location: `line ${lineNo}`, reason: `payload is not a complete gzip stream (${broken})`, excerpt: excerptOf(line) } };
  } else {
    const { line, tooLong } = takeLine(decoder.end());
    if (line.length > 0 || tooLong) {
      lineNo++;
      const out = tooLong ? tooLongItem(line) : parseLine(up, line, lineNo, seen);
      if (Array.isArray(out)) for (const item of out) yield item;
      else if (out !== undefined) yield out;
    }
  }

  // contracts §17: a file of which not one line is a JSON object is not NDJSON at all. Its lines
  // stay rejected (each with its reason), and the upload ends `failed`, never `done` with nothing stored.
  if (seen.objects === 0 && lineNo > 0) throw new UnreadableExportError('', `not a HealthKit NDJSON upload: not one of its ${lineNo} lines is a JSON object`);
  for (const record of wholeUploadRecords(up)) yield { record };
}

export const healthKitParser: DeviceParser = {
  slug: 'device-a',
  parse(payload: Buffer, ctx) {
    return parseHealthKit(payload, ctx.provider);
  },
};
