/**
 * `npm run bench -- ingest [--lines=1000000]`: one device-a upload of N quantity lines, from the
 * request to every record queryable, against the service started as `npm start` does. Stages:
 * upload accepted (stored durably), ETL finished (records appended as events), records projected
 * (queryable; polled through the coverage report). Next to it, in the same run: raw
 * better-sqlite3 inserts of the same N rows into a table shaped like the samples read model, and
 * the parse alone (gunzip + JSON.parse of every line).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { createGunzip, gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { json, machine, startService } from './support/service.js';

function makeLines(n: number): string[] {
  const base = Date.parse('2026-10-01T00:00:00.000Z');
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const t = new Date(base + i * 5_000).toISOString();
    const hr = i % 2 === 0;
    lines.push(
      JSON.stringify({
        kind: 'quantity',
        uuid: randomUUID(),
        type: hr ? 'HKQuantityTypeIdentifierHeartRate' : 'HKQuantityTypeIdentifierStepCount',
        value: hr ? 55 + (i % 60) : i % 40,
        unit: hr ? 'count/min' : 'count',
        start_date: t,
        end_date: t,
        source_name: 'Apple Watch',
        source_bundle_id: 'com.apple.health.1A2B3C',
        device_model: 'Watch',
        product_type: 'Watch7,1',
        was_user_entered: false,
        metadata: { HKTimeZone: 'Europe/Berlin' },
      }),
    );
  }
  return lines;
}

async function parseOnly(gz: Buffer): Promise<number> {
  let n = 0;
  const rl = createInterface({ input: Readable.from([gz]).pipe(createGunzip()), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line) {
      JSON.parse(line);
      n++;
    }
  }
  return n;
}

function rawInserts(dir: string, lines: string[]): number {
  const db = new Database(join(dir, 'raw.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE rm_samples (_id TEXT PRIMARY KEY, doc TEXT NOT NULL);
    CREATE INDEX s1 ON rm_samples (json_extract(doc, '$.user_id'), json_extract(doc, '$.type'), json_extract(doc, '$.start_date'), json_extract(doc, '$.id'));
    CREATE INDEX s2 ON rm_samples (json_extract(doc, '$.user_id'), json_extract(doc, '$.day'));`);
  const ins = db.prepare('INSERT INTO rm_samples (_id, doc) VALUES (?, ?)');
  const user = randomUUID();
  const t0 = performance.now();
  const tx = db.transaction((chunk: string[], offset: number) => {
    chunk.forEach((line, k) => {
      const l = JSON.parse(line);
      const doc = { ...l, id: offset + k, user_id: user, day: l.start_date.slice(0, 10), provider: 'device-a' };
      ins.run(`${user}|device-a|${l.uuid}`, JSON.stringify(doc));
    });
  });
  for (let i = 0; i < lines.length; i += 4000) tx(lines.slice(i, i + 4000), i);
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

export default async function main(args: string[]) {
  const n = Number(args.find((a) => a.startsWith('--lines='))?.split('=')[1] ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-ingest-'));
  try {
    console.log(`machine: ${machine()}`);
    const lines = makeLines(n);
    const ndjson = Buffer.from(lines.join('\n') + '\n');
    const gz = gzipSync(ndjson, { level: 6 });
    console.log(`upload: ${n} lines, ${(ndjson.length / 2 ** 20).toFixed(0)} MiB NDJSON, ${(gz.length / 2 ** 20).toFixed(1)} MiB gzip`);

    const t = performance.now();
    await parseOnly(gz);
    const parseMs = performance.now() - t;
    const rawMs = rawInserts(dir, lines);

    const svc = await startService(join(dir, 'svc'));
    try {
      const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
      const tenant = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: '{"name":"bench"}' }));
      const tk = { authorization: `Bearer ${tenant.api_key}`, 'content-type': 'application/json' };
      const user = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
      const token = await json<{ token: string }>(
        await fetch(`${svc.base}/v1/users/${user.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }),
      );

      const form = new FormData();
      form.append('file', new Blob([gz], { type: 'application/gzip' }), 'export.ndjson.gz');
      const t0 = performance.now();
      const res = await fetch(`${svc.base}/v1/ingest/device-a`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.token}`, 'upload-id': `bench-${randomUUID()}` },
        body: form,
      });
      if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
      const t1 = performance.now();
      // Cheap probes only (the service shares one thread with its ETL and projections): the ETL
      // queue, and the upload's last heart-rate and step samples, which are projected last.
      const lastOf = (type: string) => lines.findLast((l) => l.includes(type))!;
      const probes = ['HeartRate', 'StepCount'].map((t) => JSON.parse(lastOf(`HKQuantityTypeIdentifier${t}`)) as { start_date: string });
      let t2 = 0;
      for (;;) {
        await new Promise((r) => setTimeout(r, 500));
        if (!t2) {
          const running = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/pipeline/etl-jobs?status=running`, { headers: tk }));
          const pending = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/pipeline/etl-jobs?status=pending`, { headers: tk }));
          const parked = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/pipeline/etl-jobs?status=parked`, { headers: tk }));
          if (parked.data.length) throw new Error('the ETL job was parked');
          if (running.data.length === 0 && pending.data.length === 0) t2 = performance.now();
        }
        let found = 0;
        for (const [i, type] of ['heart_rate', 'step_count'].entries()) {
          const q = new URLSearchParams({ type, view: 'all', start: probes[i]!.start_date, limit: '1' });
          const page = await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${user.id}/samples?${q}`, { headers: tk }));
          found += page.data.length;
        }
        if (t2 && found === 2) break;
        if (performance.now() - t0 > 30 * 60_000) throw new Error('not queryable after 30 minutes');
      }
      const t3 = performance.now();
      const cov = await json<{ days: { records: number }[] }>(await fetch(`${svc.base}/v1/users/${user.id}/coverage?view=all`, { headers: tk }));
      const stored = cov.days.reduce((s, d) => s + d.records, 0);
      if (stored !== n) throw new Error(`coverage counts ${stored} records, expected ${n}`);
      const s = (ms: number) => (ms / 1000).toFixed(1);
      console.log('\n| stage | seconds | records/s |');
      console.log('|---|---:|---:|');
      console.log(`| upload accepted (transfer, checks, durable store) | ${s(t1 - t0)} | |`);
      console.log(`| ETL finished (parse, normalise, append events) | ${s((t2 || t3) - t1)} | ${Math.round(n / (((t2 || t3) - t1) / 1000))} |`);
      console.log(`| all records queryable (projection) | ${s(t3 - (t2 || t1))} | |`);
      console.log(`| **end to end** | **${s(t3 - t0)}** | **${Math.round(n / ((t3 - t0) / 1000))}** |`);
      console.log(`| raw better-sqlite3 inserts of the same rows (samples-shaped table) | ${s(rawMs)} | ${Math.round(n / (rawMs / 1000))} |`);
      console.log(`| gunzip + JSON.parse only | ${s(parseMs)} | ${Math.round(n / (parseMs / 1000))} |`);
      console.log(`\nend to end / raw inserts: ${((rawMs / (t3 - t0)) * 100).toFixed(0)} % of the raw insert rate`);
    } finally {
      await svc.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
