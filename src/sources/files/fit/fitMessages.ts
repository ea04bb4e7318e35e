import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FIT_LIMITS } from '../exportShared/parserLimits.js';

/**
 * The messages of a FIT file, one at a time, decoded by fit-file-parser (docs/formats/fit.md says
 * why this decoder). Its `FitParser.parse` decodes a whole file or nothing, reads only the first
 * of several chained FIT files, and throws away what it read before a damaged byte; the contract
 * (§20) wants a damaged file read up to the damage and every chained file read. So the package's
 * own record reader (`readRecord`, the function `parse` loops over, with its profile, scaling,
 * developer fields and compressed timestamps) is called here message by message, and its CRC
 * function checks each file. Only the 12/14-byte file header is read here: its size, its data
 * length and its ".FIT" signature, to find where each chained file starts and ends.
 *
 * The package exports `readRecord` (and its profile's enums) from its own modules but not through
 * its `exports` map, so they are loaded by path next to the package's entry point; package.json
 * pins the minor version, and test/sources/files/fit proves it on real files.
 */

type RecordReader = {
  readRecord(
    blob: Uint8Array,
    messageTypes: unknown[],
    developerFields: unknown[],
    startIndex: number,
    options: Record<string, unknown>,
    startDate: undefined,
    pausedTime: number,
    dataView: DataView | undefined,
    decoderState: Record<string, unknown>,
    dataEnd: number,
  ): { messageType: string; nextIndex: number; message?: Record<string, unknown> };
  calculateCRC(blob: Uint8Array, start: number, end: number): number;
};

const require = createRequire(import.meta.url);
const packageDir = dirname(require.resolve('fit-file-parser'));
const reader = require(join(packageDir, 'binary.js')) as RecordReader;
const profile = require(join(packageDir, 'profile.js')) as { PROFILE_TYPES: Record<string, Record<string, string> | undefined> };

/**
 * The profile's `activity_type` enum as the package names it (generic, running, cycling, …,
 * walking, sedentary, all): what a monitoring message packs in `current_activity_type_intensity`,
 * which the decoder hands on as the byte it is.
 */
export const FIT_ACTIVITY_TYPES: ReadonlyMap<number, string> = new Map(Object.entries(profile.PROFILE_TYPES.activity_type ?? {}).map(([id, name]) => [Number(id), name]));

/**
 * The decoder's options: units as the catalog stores them (metres, m/s, °C), nothing forced past
 * a broken structure, and the bounds checks of its raw mode on (an empty list of messages to keep
 * raw turns them on and keeps none).
 */
const OPTIONS = { force: false, speedUnit: 'm/s', lengthUnit: 'm', temperatureUnit: 'celsius', pressureUnit: 'bar', mode: 'list', elapsedRecordField: false, includeRawMessages: [] };

export type FitMessage = { name: string; fields: Record<string, unknown>; /** Byte offset of the message in the whole file. */ offset: number };
/** Where reading stopped and why; nothing after `offset` is read. */
export type FitDamage = { offset: number; reason: string };
export type FitItem = { message: FitMessage } | { fileStart: number } | { damage: FitDamage };

export type FitReadLimits = { maxMessages: number; maxDeveloperFields: number };

const SIGNATURE = [0x2e, 0x46, 0x49, 0x54]; // ".FIT"

/** Why these bytes cannot start a FIT file (judged from its header alone), or null. */
export function fitHeaderProblem(bytes: Uint8Array, at = 0): string | null {
  if (bytes.length - at < 12) return `${bytes.length - at} bytes are too few for a FIT file header (12 or 14 bytes)`;
  const size = bytes[at]!;
  if (size !== 12 && size !== 14) return `the FIT header size is ${size}, not 12 or 14`;
  if (!SIGNATURE.every((b, i) => bytes[at + 8 + i] === b)) return 'the header has no ".FIT" signature at bytes 8-11';
  return null;
}

/**
 * Every message of every FIT file chained in `bytes`, in order; `{ fileStart }` before each
 * chained file's messages, and at most one `{ damage }`, last.
 */
export function* fitMessages(bytes: Uint8Array, limits: FitReadLimits = FIT_LIMITS): Generator<FitItem> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let messages = 0;
  let at = 0;
  while (at < bytes.length) {
    const headerProblem = fitHeaderProblem(bytes, at);
    if (headerProblem) {
      yield { damage: { offset: at, reason: at === 0 ? headerProblem : `after the FIT file(s) before it: ${headerProblem}` } };
      return;
    }
    const headerSize = bytes[at]!;
    if (headerSize === 14) {
      const stored = view.getUint16(at + 12, true);
      if (stored !== 0 && stored !== reader.calculateCRC(bytes, at, at + 12)) {
        yield { damage: { offset: at + 12, reason: 'the FIT header CRC does not match the header' } };
        return;
      }
    }
    const declaredEnd = at + headerSize + view.getUint32(at + 4, true);
    const cutOff = declaredEnd + 2 > bytes.length;
    if (!cutOff && view.getUint16(declaredEnd, true) !== reader.calculateCRC(bytes, at, declaredEnd)) {
      yield { damage: { offset: declaredEnd, reason: `the FIT file CRC does not match its ${declaredEnd - at - headerSize} bytes of messages, so none of them is trusted` } };
      return;
    }
    const dataEnd = Math.min(declaredEnd, bytes.length);
    yield { fileStart: at };
    // Each chained file has its own definitions and developer fields.
    const messageTypes: unknown[] = [];
    const developerFields: unknown[] = [];
    const state: Record<string, unknown> = {};
    let descriptions = 0;
    let i = at + headerSize;
    while (i < dataEnd) {
      if (messages >= limits.maxMessages) {
        yield { damage: { offset: i, reason: `more than ${limits.maxMessages} messages: the rest is not read` } };
        return;
      }
      let r: ReturnType<RecordReader['readRecord']>;
      try {
        r = reader.readRecord(bytes, messageTypes, developerFields, i, OPTIONS, undefined, 0, view, state, dataEnd);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        yield {
          damage: {
            offset: i,
            reason: cutOff
              ? `the file is cut off: its header declares ${declaredEnd + 2 - at} bytes, it holds ${bytes.length - at}, and the message at this byte is incomplete (${why})`
              : `the message at this byte cannot be decoded (${why})`,
          },
        };
        return;
      }
      if (r.nextIndex <= i || r.nextIndex > dataEnd) {
        yield { damage: { offset: i, reason: cutOff ? `the file is cut off inside the message at this byte (its header declares ${declaredEnd + 2 - at} bytes, it holds ${bytes.length - at})` : 'the message at this byte runs past the end of the file\'s messages' } };
        return;
      }
      if (r.messageType !== 'definition') {
        messages++;
        if (r.messageType === 'field_description' && ++descriptions > limits.maxDeveloperFields) {
          yield { damage: { offset: i, reason: `more than ${limits.maxDeveloperFields} developer field descriptions: the rest is not read` } };
          return;
        }
        if (r.messageType !== '' && r.message) yield { message: { name: r.messageType, fields: r.message, offset: i } };
      }
      i = r.nextIndex;
    }
    if (cutOff) {
      yield { damage: { offset: bytes.length, reason: `the file is cut off: its header declares ${declaredEnd + 2 - at} bytes, it holds ${bytes.length - at}` } };
      return;
    }
    at = declaredEnd + 2;
  }
}
