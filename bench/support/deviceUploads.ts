import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { json } from './service.js';

export const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};

const BASE = Date.parse('2026-11-01T00:00:00.000Z');

/** One device-a NDJSON line: a heart rate sample, minute `i` of November 2026. */
const latencyRow = (name: string, ms: number[]) => `| ${name} | ${ms.length} | ${percentile(ms, 50).toFixed(0)} | ${percentile(ms, 99).toFixed(0)} | ${Math.max(0, ...ms).toFixed(0)} |`;

/** Prints a latency table: `what` and `count` head its first two columns, then a row per series (how many, p50, p99 and max in ms). */
export function printLatencyTable(what: string, count: string, rows: [name: string, ms: number[]][]): void {
  console.log(`\n| ${what} | ${count} | p50 ms | p99 ms | max ms |`);
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, ms] of rows) console.log(latencyRow(name, ms));
}

/** A device-a heart-rate line at `t` (ms), its value from `i`. */
export const heartRateAt = (t: number, i: number) =>
  JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', value: 60 + (i % 40), start_date: new Date(t).toISOString(), end_date: new Date(t).toISOString(), source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B3C' });

export function heartRateLine(i: number): string {
  const t = new Date(BASE + i * 60_000).toISOString();
  return JSON.stringify({ kind: 'quantity', uuid: randomUUID(), type: 'HKQuantityTypeIdentifierHeartRate', unit: 'count/min', value: 60 + (i % 40), start_date: t, end_date: t, source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B3C' });
}

/** Polls the tenant's ETL jobs until none is pending or running (throws on a parked job, or after 30 minutes from `t0`). */
export async function waitForEtlJobs(base: string, headers: Record<string, string>, t0: number, pollMs = 100): Promise<void> {
  const jobs = async (status: string) => (await json<{ data: unknown[] }>(await fetch(`${base}/v1/pipeline/etl-jobs?status=${status}&limit=1`, { headers }))).data.length;
  for (;;) {
    if (await jobs('parked')) throw new Error('an ETL job was parked');
    if ((await jobs('running')) === 0 && (await jobs('pending')) === 0) return;
    if (performance.now() - t0 > 30 * 60_000) throw new Error('not processed after 30 minutes');
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** An upload's 202: when it came (ms since the epoch, to compare with a webhook receiver's clock) and the upload id it names. */
export type Accepted = { at: number; uploadId: string };

/**
 * One-line device-a uploads (`uploads` of them, `inflight` at a time) to `url`, upload i with
 * `tokenFor(i)` and Upload-Id `<tag>-<i>`; answers the wall time, each POST's latency (its last
 * attempt's) and each upload's 202. A 429 throws, unless `retry429`: then the upload is sent again
 * after the answer's Retry-After (as a client would), and `tooMany` counts those 429s. `line`:
 * upload i's line (default `heartRateLine(i)`, minute i of November 2026).
 */
export async function uploadOneLiners(
  url: string,
  tokenFor: (i: number) => string,
  uploads: number,
  inflight: number,
  tag: string,
  o: { retry429?: boolean; line?: (i: number) => string } = {},
): Promise<{ ms: number; latencies: number[]; accepted: Accepted[]; tooMany: number }> {
  const latencies: number[] = [];
  const accepted: Accepted[] = new Array<Accepted>(uploads);
  let tooMany = 0;
  const t0 = performance.now();
  await inFlight(uploads, inflight, async (i) => {
    for (;;) {
      const t = performance.now();
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokenFor(i)}`, 'upload-id': `${tag}-${i}`, 'content-type': 'application/gzip' },
        body: gzipSync((o.line ?? heartRateLine)(i)),
      });
      if (res.status === 429 && o.retry429) {
        tooMany++;
        await res.arrayBuffer();
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
        continue;
      }
      if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
      const at = Date.now();
      const { upload_id } = (await res.json()) as { upload_id: string };
      latencies.push(performance.now() - t);
      accepted[i] = { at, uploadId: upload_id };
      return;
    }
  });
  return { ms: performance.now() - t0, latencies, accepted, tooMany };
}

/** Runs `work(i)` for i in 0..n-1, `inflight` at a time; answers the results in order of i. */
export async function inFlight<T>(n: number, inflight: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, inflight) }, async () => {
      for (let i = next++; i < n; i = next++) out[i] = await work(i);
    }),
  );
  return out;
}
