import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { SaxesParser } from 'saxes';
import { APPLE_FILE_LIMITS } from '../exportShared/parserLimits.js';

/**
 * A workout route file of the export (`workout-routes/route_….gpx`, GPX 1.1 as the Health app
 * writes it): `<trkpt lat lon><ele/><time/><extensions><speed/><course/><hAcc/><vAcc/></extensions></trkpt>`,
 * read as a stream into device-a's route point shape (CLLocation's names). Files other tools
 * re-wrote (attribute order, quotes, declaration) read the same.
 */

export type RoutePointLine = {
  timestamp: string;
  latitude: number;
  longitude: number;
  altitude?: number;
  speed?: number;
  course?: number;
  horizontal_accuracy?: number;
  vertical_accuracy?: number;
};

const MAX_GPX_DEPTH = APPLE_FILE_LIMITS.maxGpxDepth;
/** No run of text without a tag end may exceed this (the parser buffers it whole). */
const MAX_RUN_CHARS = APPLE_FILE_LIMITS.maxGpxRunChars;

export type GpxResult = { points: RoutePointLine[]; error: string | null; truncated: boolean };

const FIELDS: Readonly<Record<string, keyof RoutePointLine>> = {
  ele: 'altitude',
  speed: 'speed',
  course: 'course',
  hAcc: 'horizontal_accuracy',
  vAcc: 'vertical_accuracy',
};

/** Reads at most `maxPoints` points (a bound the caller sets for the whole workout). */
export async function readGpx(stream: Readable, maxPoints: number): Promise<GpxResult> {
  const parser = new SaxesParser({ position: false });
  const points: RoutePointLine[] = [];
  let point: (Partial<RoutePointLine> & { latitude: number; longitude: number }) | null = null;
  let field: string | null = null;
  let text = '';
  let error: string | null = null;
  let truncated = false;
  const local = (name: string) => name.slice(name.indexOf(':') + 1);

  let fed = 0;
  let lastEventAt = 0;
  let depth = 0;
  parser.on('opentag', (tag) => {
    lastEventAt = fed;
    depth++;
    const name = local(tag.name);
    if (name === 'trkpt' || name === 'rtept' || name === 'wpt') {
      const a = tag.attributes as Record<string, string>;
      point = { latitude: Number(a.lat), longitude: Number(a.lon) };
    } else if (point) {
      field = name;
      text = '';
    }
  });
  parser.on('text', (t) => {
    if (field !== null && text.length < 64) text += t;
  });
  parser.on('closetag', (tag) => {
    depth--;
    const name = local(tag.name);
    if (point && (name === 'trkpt' || name === 'rtept' || name === 'wpt')) {
      if (typeof point.timestamp === 'string' && points.length < maxPoints) points.push(point as RoutePointLine);
      else if (points.length >= maxPoints) truncated = true;
      point = null;
    } else if (point && field === name) {
      const t = text.trim();
      if (name === 'time') point.timestamp = t;
      else if (FIELDS[name]) (point as Record<string, unknown>)[FIELDS[name]] = Number(t);
      field = null;
    }
  });
  parser.on('error', (err) => {
    error ??= err.message;
  });

  const decoder = new StringDecoder('utf8');
  let run = 0;
  try {
    for await (const chunk of stream) {
      // eslint-disable-next-line no-control-regex
      const text = decoder.write(chunk as Buffer).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g, '');
      const gt = text.lastIndexOf('>');
      run = gt === -1 ? run + text.length : text.length - gt - 1;
      if (run > MAX_RUN_CHARS) {
        error ??= `a tag or text longer than ${MAX_RUN_CHARS} characters`;
        break;
      }
      fed += text.length;
      parser.write(text);
      if (truncated) break;
      // An unclosed comment or CDATA section would be buffered whole: a route file has an element every few dozen characters.
      if (fed - lastEventAt > MAX_RUN_CHARS) {
        error ??= `no element in the last ${MAX_RUN_CHARS} characters`;
        break;
      }
      // GPX nests five levels; the parser keeps every open tag.
      if (depth > MAX_GPX_DEPTH) {
        error ??= `elements nested deeper than ${MAX_GPX_DEPTH}`;
        break;
      }
    }
    if (!truncated && error === null) parser.write(decoder.end()).close();
  } catch (err) {
    error ??= err instanceof Error ? err.message : String(err);
  } finally {
    stream.destroy();
  }
  return { points, error, truncated };
}
