import type { ReadStore } from '../../src/readstore/readStore.js';
import { quarterAligned, seriesStatsFromRollups } from './rollupStats.js';
import { formatWithOffset, labelOf, MAX_STATS_BUCKETS, sampleStats, statsIntervals, type SampleStatsQuery } from './sampleStats.js';

/**
 * An answer's buckets as JSON, for a route that writes its answer's bytes itself (the REST route,
 * src/server/routes/sampleStats.ts): `truncated` as sampleStats answers it, and `write` hands over
 * the buckets' JSON array elements (comma-separated, without the brackets) in pieces of a few KB,
 * the same bytes the route's compiled serializer writes for sampleStats' buckets
 * (test/queries/records/sampleStatsJson.test.ts). From the rollups the buckets are written from
 * the series' columns, never made into objects: a year of days in view `all` is 730 buckets, and
 * their objects, the serializer's rope of strings and the ~115 KB string it made were most of the
 * garbage of such a request (BENCHMARKS.md, "Issue 38: statistics p99 ≤ 5 ms").
 */
export type StatsBucketsJson = { truncated: boolean; write: (write: (json: string) => void) => void };

export async function sampleStatsJson(
  readStore: ReadStore,
  q: SampleStatsQuery,
  opts: { maxBuckets?: number; chunk?: number } = {},
): Promise<StatsBucketsJson> {
  const max = opts.maxBuckets ?? MAX_STATS_BUCKETS;
  const intervals = statsIntervals(q.window, q.interval);
  if (!quarterAligned(intervals)) {
    const { buckets, truncated } = await sampleStats(readStore, q, opts);
    return {
      truncated,
      write: (write) =>
        writeBuckets(
          buckets.length,
          (k, parts) => {
            const b = buckets[k]!;
            pushBucket(parts, b.start, seriesJson(b), b.count, b.sum, b.min, b.max);
          },
          write,
        ),
    };
  }
  const series = await seriesStatsFromRollups(readStore, { userId: q.userId, type: q.type, view: q.view, ...(q.provider !== undefined ? { provider: q.provider } : {}) }, intervals);
  // Answer order: by interval, then series (the series come ordered).
  let n = 0;
  for (let i = 0; i < intervals.length; i++) for (const { stats } of series) if (stats[4 * i]! > 0) n++;
  const heads = series.map(seriesJson);
  return {
    truncated: n > max,
    write: (write) => {
      // The next bucket is interval i's, of series k or a later one (n of them in all, so one is always found).
      let i = 0;
      let k = 0;
      let label = '';
      const next = (_: number, parts: string[]): void => {
        for (;;) {
          if (k === series.length) {
            k = 0;
            i++;
            label = '';
          }
          const stats = series[k]!.stats;
          const at = 4 * i;
          k++;
          if (stats[at]! > 0) {
            label ||= labelOf(intervals[i]!);
            pushBucket(parts, label, heads[k - 1]!, stats[at]!, stats[at + 1]!, stats[at + 2]!, stats[at + 3]!);
            return;
          }
        }
      };
      writeBuckets(Math.min(n, max), next, write);
    },
  };
}

/**
 * The answer's JSON up to its buckets' first (`{"type":…,"truncated":…,"buckets":[`), its fields in
 * the order of the route's schema (SampleStatistics), as its compiled serializer writes them; the
 * buckets and `]}` follow.
 */
export function statsAnswerHead(q: Pick<SampleStatsQuery, 'type' | 'interval' | 'tz' | 'view' | 'window'>, truncated: boolean): string {
  const str = JSON.stringify;
  return `{"type":${str(q.type)},"interval":${str(q.interval)},"tz":${str(q.tz)},"view":${str(q.view)},"start":${str(formatWithOffset(q.window.start))},"end":${str(formatWithOffset(q.window.end))},"truncated":${truncated},"buckets":[`;
}

/** Buckets joined in pieces of this many (a few KB of short-lived strings), each piece handed to `write`. */
const BUCKETS_PER_PIECE = 64;

/**
 * `n` buckets, comma-separated, each pushed as its parts (bucket k's by `bucket(k, parts)`); a piece's
 * parts are joined once, so a bucket costs its numbers' strings, not a rope of a dozen concatenations.
 */
function writeBuckets(n: number, bucket: (k: number, parts: string[]) => void, write: (json: string) => void): void {
  const parts: string[] = [];
  for (let k = 0; k < n; k++) {
    if (k > 0) parts.push(',');
    bucket(k, parts);
    if ((k + 1) % BUCKETS_PER_PIECE === 0 || k === n - 1) {
      write(parts.join(''));
      parts.length = 0;
    }
  }
}

/** The JSON of a bucket's series fields, from `,"provider":` to `"count":` (written once per series). */
const seriesJson = (s: { provider: string; source: string; unit: string }): string =>
  `,"provider":${JSON.stringify(s.provider)},"source":${JSON.stringify(s.source)},"unit":${JSON.stringify(s.unit)},"count":`;

/** One bucket's parts, as the compiled serializer writes StatsBucket: a count as an integer, the other numbers as JSON numbers (an infinite one as null). */
function pushBucket(parts: string[], start: string, series: string, count: number, sum: number, min: number, max: number): void {
  parts.push('{"start":"', start, '"', series, jsonInteger(count), ',"sum":', jsonNumber(sum), ',"avg":', jsonNumber(sum / count), ',"min":', jsonNumber(min), ',"max":', jsonNumber(max), '}');
}

function jsonNumber(v: number): string {
  if (v !== v) throw new Error(`The value "${v}" cannot be converted to a number.`);
  return v === Infinity || v === -Infinity ? 'null' : String(v);
}

function jsonInteger(v: number): string {
  if (!Number.isInteger(v)) throw new Error(`a bucket's count ${v} is not an integer`);
  return String(v);
}
