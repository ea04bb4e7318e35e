/**
 * `npm run bench -- fairness [--mode=apple|samples --mb=200 --samples=300000 --parts=3 --every=250 --alone=15]`:
 * fair sharing between tenants (contracts §18, issue 34 §8), on the service started as `npm start`
 * starts it (default configuration). Tenant B sends a one-line device-a upload every `every` ms
 * and measures each one from its POST to its sample being readable (its GET answers it), first for
 * `alone` seconds with nothing else running, then while tenant A's bulk work runs:
 * - `apple`: a generated Health app export.xml of about `mb` MiB (bench/support/appleExportGenerator.ts)
 *   uploaded by tus (the CLI's client), until its Upload is `done` and its coverage stops growing;
 * - `samples`: `samples` device-a heart-rate lines in `parts` uploads sent back to back, until the
 *   last sample of each is readable.
 * Reported: B's upload → readable p50/p99/max alone and during A's work, B's uploads not readable
 * when the run ended, A's time to done / readable, and the machine's load average.
 */
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tusUpload } from '../src/cli/tusClient.js';
import { writeExportXml } from './support/appleExportGenerator.js';
import { heartRateAt, printLatencyTable } from './support/deviceUploads.js';
import { json, machine, startService } from './support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const arg = (args: string[], name: string, fallback: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

export default async function fairness(args: string[]): Promise<void> {
  const mode = arg(args, 'mode', 'apple');
  const mb = Number(arg(args, 'mb', '200'));
  const samples = Number(arg(args, 'samples', '300000'));
  const parts = Number(arg(args, 'parts', '3'));
  const every = Number(arg(args, 'every', '250'));
  const alone = Number(arg(args, 'alone', '15'));
  // --trace=<dir>: each of B's uploads as a line of b-uploads.jsonl (epoch ms: sent, answered, first
  // read that saw it), and the event store copied there after the run (its events' created_at).
  const trace = arg(args, 'trace', '');
  if (trace) mkdirSync(trace, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-fairness-'));
  try {
    const xml = join(dir, 'export.xml');
    if (mode === 'apple' && !existsSync(xml)) await writeExportXml(xml, { targetBytes: mb * 2 ** 20 });
    // Tenant A's uploads are built before anything is measured: built during A's work, each
    // part's synchronous gzip held this process's event loop 0.5-1 s, and B's upload in flight
    // then was counted that long.
    const aParts: { body: Buffer; last: number }[] = [];
    if (mode !== 'apple') {
      const per = Math.ceil(samples / parts);
      const aBase = Date.parse('2020-01-01T00:00:00.000Z');
      for (let p = 0; p < parts; p++) {
        const from = p * per;
        const n = Math.min(per, samples - from);
        aParts.push({ body: gzipSync(Array.from({ length: n }, (_, i) => heartRateAt(aBase + (from + i) * 60_000, from + i)).join('\n')), last: aBase + (from + n - 1) * 60_000 });
      }
    }
    const svc = await startService(join(dir, 'svc'), { IMPORT_MAX_BYTES: String(64 * 2 ** 30) });
    try {
      console.log(`fairness (${mode === 'apple' ? `tenant A imports a ${mb} MiB export.xml by tus` : `tenant A uploads ${samples.toLocaleString('en-US')} device-a samples in ${parts} uploads`}; tenant B one line every ${every} ms), ${machine()}`);
      const admin = { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' };
      const tenant = async (name: string) => {
        const t = await json<{ api_key: string }>(await fetch(`${svc.base}/v1/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ name }) }));
        const tk = { authorization: `Bearer ${t.api_key}`, 'content-type': 'application/json' };
        const u = await json<{ id: string }>(await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: tk, body: '{}' }));
        const { token } = await json<{ token: string }>(await fetch(`${svc.base}/v1/users/${u.id}/tokens`, { method: 'POST', headers: tk, body: '{"scopes":["upload"]}' }));
        return { tk, id: u.id, token };
      };
      const a = await tenant('tenant-a');
      const b = await tenant('tenant-b');
      const readable = async (who: { tk: Record<string, string>; id: string }, at: number) => {
        const q = new URLSearchParams({ type: 'heart_rate', view: 'all', start: new Date(at).toISOString(), end: new Date(at + 1000).toISOString(), limit: '1' });
        return (await json<{ data: unknown[] }>(await fetch(`${svc.base}/v1/users/${who.id}/samples?${q}`, { headers: who.tk }))).data.length > 0;
      };

      // Tenant B: one line per `every` ms, each polled until readable; phase by when it was sent.
      const measured = { alone: [] as number[], during: [] as number[] };
      const phase = { current: 'alone' as 'alone' | 'during' | 'after' };
      let stop = false;
      let unread = 0;
      let sent = 0;
      const bBase = Date.parse('2026-11-01T00:00:00.000Z');
      const pollers: Promise<void>[] = [];
      const bLoop = (async () => {
        for (let i = 0; !stop; i++) {
          const next = performance.now() + every;
          const at = bBase + i * 60_000;
          const sentIn = phase.current;
          const t0 = performance.now();
          const res = await fetch(`${svc.base}/v1/ingest/device-a`, {
            method: 'POST',
            headers: { authorization: `Bearer ${b.token}`, 'upload-id': `b-${i}`, 'content-type': 'application/gzip' },
            body: gzipSync(heartRateAt(at, i)),
          });
          await res.arrayBuffer();
          if (res.status !== 202) throw new Error(`tenant B's upload answered ${res.status}`);
          const answered = Date.now();
          sent++;
          pollers.push(
            (async () => {
              const deadline = t0 + 300_000;
              let polls = 0;
              let pollSent = Date.now();
              for (; !(await readable(b, at)); polls++) {
                if (performance.now() > deadline) return void unread++;
                await sleep(25);
                pollSent = Date.now();
              }
              const ms = performance.now() - t0;
              if (sentIn !== 'after') measured[sentIn].push(ms);
              if (trace) appendFileSync(join(trace, 'b-uploads.jsonl'), `${JSON.stringify({ i, phase: sentIn, ms: Math.round(ms), sent: Math.round(performance.timeOrigin + t0), answered, pollSent, seen: Date.now(), polls })}\n`);
            })(),
          );
          await sleep(Math.max(0, next - performance.now()));
        }
      })();

      await sleep(alone * 1000);
      phase.current = 'during';
      const started = performance.now();
      if (trace) appendFileSync(join(trace, 'a.jsonl'), `${JSON.stringify({ ev: 'start', at: Date.now() })}\n`);
      const load0 = loadavg()[0]!;
      let done = 0;
      let accepted = 0;
      if (mode === 'apple') {
        const size = statSync(xml).size;
        await tusUpload({ origin: svc.base, token: a.token, path: xml, size, metadata: { provider: 'apple-health', upload_id: 'a-export' } }, () => {});
        accepted = performance.now() - started;
        for (;;) {
          const u = await json<{ status: string; error?: string }>(await fetch(`${svc.base}/v1/me/uploads/apple-health/a-export`, { headers: { authorization: `Bearer ${a.token}` } }));
          if (u.status === 'failed' || u.status === 'parked') throw new Error(`tenant A's import ended ${u.status}: ${u.error}`);
          if (u.status === 'done') break;
          await sleep(250);
        }
        done = performance.now() - started;
        // Readable: the coverage report (every record kind, every day) stopped growing for 2 s.
        let last = -1;
        for (let still = 0; still < 4; await sleep(500)) {
          const cov = await json<{ days: { records: number }[] }>(await fetch(`${svc.base}/v1/users/${a.id}/coverage?view=all&start=1990-01-01&end=2100-01-01`, { headers: a.tk }));
          const n = cov.days.reduce((sum, d) => sum + d.records, 0);
          still = n === last ? still + 1 : 0;
          last = n;
        }
        console.log(`export.xml: ${(size / 2 ** 20).toFixed(0)} MiB, ${last.toLocaleString('en-US')} records readable`);
      } else {
        const lasts: number[] = [];
        for (const [p, { body, last }] of aParts.entries()) {
          const form = new FormData();
          form.append('file', new Blob([body], { type: 'application/gzip' }), `part-${p}.ndjson.gz`);
          const res = await fetch(`${svc.base}/v1/ingest/device-a`, { method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'upload-id': `a-${p}` }, body: form });
          await res.arrayBuffer();
          if (res.status !== 202) throw new Error(`tenant A's upload answered ${res.status}`);
          lasts.push(last);
        }
        accepted = performance.now() - started;
        for (const last of lasts) while (!(await readable(a, last))) await sleep(250);
        done = performance.now() - started;
      }
      const aMs = performance.now() - started - (mode === 'apple' ? 2_000 : 0);
      phase.current = 'after';
      if (trace) appendFileSync(join(trace, 'a.jsonl'), `${JSON.stringify({ ev: 'readable', at: Date.now() })}\n`);
      const load1 = loadavg()[0]!;
      stop = true;
      await bLoop;
      await Promise.all(pollers);

      printLatencyTable('tenant B one-line uploads sent', 'readable', [
        [`alone (${alone} s)`, measured.alone],
        [`while tenant A's work ran (${(aMs / 1000).toFixed(0)} s)`, measured.during],
      ]);
      console.log(`\ntenant B uploads sent: ${sent}; not readable within 300 s: ${unread}`);
      console.log(`tenant A: accepted after ${(accepted / 1000).toFixed(1)} s, ${mode === 'apple' ? `Upload done after ${(done / 1000).toFixed(1)} s, all readable after ${(aMs / 1000).toFixed(1)} s` : `every upload readable after ${(done / 1000).toFixed(1)} s`}`);
      console.log(`load average (1 min) at A's start ${load0.toFixed(1)}, at its end ${load1.toFixed(1)}`);
    } finally {
      await svc.stop();
      if (trace) for (const f of readdirSync(join(dir, 'svc'))) if (/^events\.sqlite/.test(f)) copyFileSync(join(dir, 'svc', f), join(trace, f));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
