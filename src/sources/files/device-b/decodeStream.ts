import { StringDecoder } from 'node:string_decoder';
import { JSONParser } from '@streamparser/json';
import { gunzipChunks, GzipError } from '../../shared/gunzipChunks.js';
import { JsonBoundError, JsonElementBounds } from '../exportShared/jsonBounds.js';

/**
 * The device-b body `{"records":[…]}` read as a stream: gzip (recognised by its magic bytes) is
 * inflated chunk by chunk and the text goes through @streamparser/json, which hands over each
 * element of the top-level `records` array as soon as its closing bracket arrives. An upload
 * inflates to 512 MiB, more than one JS string can hold and far more than the parser should keep:
 * here only the element being parsed is in memory, so memory follows the largest record, and each
 * record, like each value of another top-level member (read and dropped: nothing but `records` is
 * used), is bounded in bytes, tokens and depth (exportShared/jsonBounds.ts, issue 34).
 *
 * The result is meant to be exactly what `JSON.parse(body).records` gave: same values, same
 * rejections (anything JSON.parse refuses, a body that is not an object, no `records` array), the
 * last of duplicate `records` keys.
 */

/** Decompressed uploads are at most 512 MiB (contracts §3 limits). */
export const MAX_BODY_BYTES = 512 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
/** The body's excerpt in a rejected item is its first KiB (the caller cuts it to 1 KiB of UTF-8). */
const HEAD_CHARS = 1024;
const MAX_REASON_CHARS = 300;
/** The gzip excerpt is base64 of the first 768 bytes: 1 KiB of text. */
const GZIP_EXCERPT_BYTES = 768;

/** The body as a whole cannot be read: the parser answers one rejected item located `body`. */
export class BodyError extends Error {
  constructor(
    reason: string,
    readonly excerpt: string,
  ) {
    super(reason);
  }
}

export function isGzip(b: Buffer): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** The inflated body, chunk by chunk; throws BodyError for a broken gzip stream or one past `maxBytes`. */
export async function* bodyChunks(payload: Buffer, maxBytes = MAX_BODY_BYTES): AsyncGenerator<Buffer> {
  if (!isGzip(payload)) {
    for (let at = 0; at < payload.length; at += CHUNK_BYTES) yield payload.subarray(at, at + CHUNK_BYTES);
    return;
  }
  const excerpt = () => payload.subarray(0, GZIP_EXCERPT_BYTES).toString('base64');
  let total = 0;
  try {
    for await (const chunk of gunzipChunks(payload, CHUNK_BYTES)) {
      total += chunk.length;
      // The same outcome as gunzipSync's maxOutputLength: the whole body is refused, not cut.
      if (total > maxBytes) throw new BodyError(`body is not valid gzip: it inflates to more than ${maxBytes} bytes`, excerpt());
      yield chunk;
    }
  } catch (err) {
    if (err instanceof GzipError) throw new BodyError(`body is not valid gzip: ${err.message}`, excerpt());
    throw err;
  }
}

/** One element of a top-level `records` array. */
export type BodyRecord = {
  /** Which top-level `records` member it belongs to (1-based): JSON.parse keeps only the last of duplicates. */
  member: number;
  /** 0-based position in that array. */
  index: number;
  record: unknown;
};

/**
 * Push-based: feed it the body's bytes in chunks of any size (a chunk may end inside a UTF-8
 * sequence, a string or a number), then call end(). Each write answers the records that chunk
 * completed. Invalid JSON stops the reading; end() then throws the BodyError, so a caller can
 * keep draining its source first (a broken gzip stream is reported before the JSON in it).
 */
export class RecordsReader {
  // `$.*.*`: the parts of other top-level members, handed over only to be dropped, so that a
  // member that is not `records` is never held whole.
  private readonly parser = new JSONParser({ paths: ['$.records', '$.records.*', '$.*.*'], keepStack: false });
  private readonly bounds = new JsonElementBounds(this.parser);
  // Text, not bytes, goes to the JSON parser: invalid UTF-8 inside a string becomes U+FFFD as
  // Buffer.toString did before JSON.parse, where the parser's own decoder would refuse the body.
  private readonly decoder = new StringDecoder('utf8');
  private completed: BodyRecord[] = [];
  private error: Error | null = null;
  private head = '';
  private started = false;
  private sawValue = false;
  /** `records` members finished so far; the one being read is members + 1. */
  private members = 0;
  private lastWasArray = false;
  private index = 0;

  constructor() {
    this.parser.onValue = ({ value, key, parent, stack }) => {
      // Nothing here may throw: the parser reports a callback's exception as invalid JSON.
      if (stack.length === 1) {
        // `$.records` itself, emptied below as its elements were handed over.
        this.members++;
        this.lastWasArray = Array.isArray(value);
        this.index = 0;
        return;
      }
      this.bounds.elementDone();
      if (stack[1]?.key !== 'records') {
        if (Array.isArray(parent)) parent.length = 0;
        else if (parent) delete (parent as Record<string, unknown>)[key as string];
        return;
      }
      // `$.records.*`. Because `$.records` is selected too, the parser keeps what it emitted in
      // the array; dropping it here is what bounds the memory.
      if (Array.isArray(parent)) {
        parent.length = 0;
        this.completed.push({ member: this.members + 1, index: this.index++, record: value });
      } else if (parent) {
        // `records` is an object: its members are not records (the body is refused at end()).
        delete (parent as Record<string, unknown>)[key as string];
      }
    };
    this.parser.onError = (err) => {
      this.error ??= err;
    };
  }

  write(chunk: Buffer): BodyRecord[] {
    this.bounds.fed(chunk.length);
    this.text(this.decoder.write(chunk));
    const tooLarge = this.bounds.tooLarge();
    if (tooLarge) this.error ??= new JsonBoundError(tooLarge);
    return this.take();
  }

  /** Throws BodyError unless the body was one JSON object whose last `records` member is an array. */
  end(): BodyRecord[] {
    this.text(this.decoder.end());
    if (!this.error && !this.parser.isEnded) this.parser.end();
    const records = this.take();
    if (this.error instanceof JsonBoundError) throw new BodyError(`body is refused: ${this.error.message}`, this.head);
    if (this.error) throw new BodyError(`body is not valid JSON: ${describe(this.error)}`, this.head);
    // JSON.parse refuses an empty or all-whitespace body; the streaming parser just sees no value.
    if (!this.sawValue) throw new BodyError('body is not valid JSON: Unexpected end of JSON input', this.head);
    if (!this.lastWasArray) throw new BodyError('body is not an object with a "records" array', this.head);
    return records;
  }

  /** How many top-level `records` members the body has; valid after end(). */
  get recordsMembers(): number {
    return this.members;
  }

  private text(s: string) {
    if (!s || this.error) return;
    let visible = s;
    if (!this.started) {
      this.started = true;
      // JSON.parse saw the text without its byte order mark; the tokenizer skips one itself.
      if (visible.charCodeAt(0) === 0xfeff) visible = visible.slice(1);
    }
    if (this.head.length < HEAD_CHARS) this.head += visible.slice(0, HEAD_CHARS - this.head.length);
    if (!this.sawValue && /[^ \t\n\r]/.test(visible)) this.sawValue = true;
    this.parser.write(s);
  }

  private take(): BodyRecord[] {
    const out = this.completed;
    this.completed = [];
    return out;
  }
}

/**
 * The tokenizer names the position inside the chunk it was given; the reason of a rejected item is
 * part of its identity (a re-run must reject the same thing the same way), so keep only the
 * absolute position, which does not depend on how the body happened to be chunked.
 */
function describe(err: Error): string {
  const message = err.message.replace(/ at chunk position "\d+" \(absolute position "(\d+)"\)/, ' at byte $1');
  // "Unexpected STRING (…)" quotes the whole token, which can be most of the body.
  return message.length > MAX_REASON_CHARS ? `${message.slice(0, MAX_REASON_CHARS)}…` : message;
}

/**
 * Reads the whole body once and hands every record of every `records` member to `onRecord`,
 * without keeping any. Resolves to the number of `records` members; throws BodyError when the
 * body cannot be read as a whole.
 */
export async function scanBody(payload: Buffer, onRecord: (r: BodyRecord) => void, maxBytes = MAX_BODY_BYTES): Promise<number> {
  const reader = new RecordsReader();
  for await (const chunk of bodyChunks(payload, maxBytes)) for (const r of reader.write(chunk)) onRecord(r);
  for (const r of reader.end()) onRecord(r);
  return reader.recordsMembers;
}

/** The records of one `records` member, as they are parsed. */
export async function* bodyRecords(payload: Buffer, member: number, maxBytes = MAX_BODY_BYTES): AsyncGenerator<BodyRecord> {
  const reader = new RecordsReader();
  for await (const chunk of bodyChunks(payload, maxBytes)) {
    for (const r of reader.write(chunk)) if (r.member === member) yield r;
  }
  for (const r of reader.end()) if (r.member === member) yield r;
}
