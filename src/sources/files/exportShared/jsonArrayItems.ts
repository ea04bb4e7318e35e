import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { JSONParser } from '@streamparser/json';
import { JsonBoundError, JsonElementBounds } from './jsonBounds.js';
import { JSON_LIMITS } from './parserLimits.js';

/**
 * The elements of a JSON file whose top level is an array (every Fitbit "Global Export Data" file),
 * handed over one at a time as the bytes arrive (@streamparser/json, as device-b's body reader),
 * so memory follows the largest element, never the file, and an element is bounded in bytes,
 * tokens and depth (jsonBounds.ts). Elements before a break in the file are good data and are
 * given; the break itself (invalid JSON, an element over a bound) ends the file with a
 * JsonArrayError naming the index of the element it fell in.
 */
const MAX_REASON_CHARS = 200;

export type JsonElement = { index: number; value: unknown };

export class JsonArrayError extends Error {
  constructor(
    reason: string,
    /** The 0-based index of the element the file broke in (the count of elements read before). */
    readonly index: number,
  ) {
    super(reason);
  }
}

export async function* jsonArrayItems(input: Readable, limits: Partial<typeof JSON_LIMITS> = {}): AsyncGenerator<JsonElement> {
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  const bounds = new JsonElementBounds(parser, { ...JSON_LIMITS, ...limits });
  const decoder = new StringDecoder('utf8');
  let ready: JsonElement[] = [];
  let error: Error | null = null;
  let index = 0;
  let opened: boolean | null = null;
  parser.onValue = ({ value, parent }) => {
    // Nothing here may throw: the parser would report it as invalid JSON.
    if (Array.isArray(parent)) parent.length = 0;
    ready.push({ index: index++, value });
    bounds.elementDone();
  };
  parser.onError = (err) => {
    error ??= err;
  };
  const feed = (text: string) => {
    if (!text || error) return;
    if (opened === null) {
      const first = /[^\s\ufeff]/.exec(text);
      if (!first) return;
      opened = first[0] === '[';
      if (!opened) return;
      // The tokenizer does not skip a byte order mark in the middle of its input: drop it here.
      text = text.slice(first.index);
    }
    if (!opened) return;
    parser.write(text);
  };
  for await (const chunk of input) {
    const buffer = chunk as Buffer;
    bounds.fed(buffer.length);
    feed(decoder.write(buffer));
    if (opened === false) throw new JsonArrayError('not a JSON array (the file does not start with "[")', 0);
    const out = ready;
    ready = [];
    yield* out;
    if (error) throw new JsonArrayError(reasonOf(error), index);
    const tooLarge = bounds.tooLarge();
    if (tooLarge) throw new JsonArrayError(tooLarge, index);
  }
  feed(decoder.end());
  if (opened === null) throw new JsonArrayError('empty file: expected a JSON array', 0);
  if (opened === false) throw new JsonArrayError('not a JSON array (the file does not start with "[")', 0);
  if (!error && !parser.isEnded) {
    try {
      parser.end();
    } catch (err) {
      error ??= err instanceof Error ? err : new Error(String(err));
    }
  }
  yield* ready;
  ready = [];
  if (error) throw new JsonArrayError(reasonOf(error), index);
}

const reasonOf = (err: Error) => (err instanceof JsonBoundError ? err.message : `invalid JSON: ${describe(err)}`);

/** Positions inside a chunk depend on how the bytes happened to be split: keep the absolute one. */
function describe(err: Error): string {
  const m = err.message.replace(/ at chunk position "\d+" \(absolute position "(\d+)"\)/, ' at byte $1');
  return m.length > MAX_REASON_CHARS ? `${m.slice(0, MAX_REASON_CHARS)}…` : m;
}
