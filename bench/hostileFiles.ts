/**
 * `npm run bench -- hostileFiles [--rows=10000] [--uploads=8]`: another tenant's reads while one
 * tenant uploads SQLite files whose schema would make SQLite run the sender's SQL on every row
 * (contracts §18, issue 34 §1: before, such files held the HTTP or ETL thread for minutes). Tenant
 * B reads its coverage back to back (20 ms apart) first alone, then while tenant A's uploads are
 * answered: `uploads` device-c databases with a CHECK bomb, as many with a generated-column bomb,
 * and half as many Health Connect zips with a generated-column bomb, all sent at once. Reported:
 * how long A's uploads took to be answered, how many reads B completed in that time (reads per
 * second: B's reader runs on the thread that serves requests, 20 ms apart, so a thread held by
 * A's files shows as reads that could not be made), B's read latency p50/p99/max, and A's answers
 * (422 refused, 429 beyond A's upload slots). In process, the service's app over `inject`.
 */
import { buildGadgetbridgeExport } from '../test/fixtures/device-c/buildGadgetbridgeExport.js';
import { buildHealthConnectDatabase } from '../test/fixtures/health-connect/buildHealthConnectExport.js';
import { withCheckBomb, withGeneratedColumnBomb } from '../test/fixtures/sqlite/sqliteBombs.js';
import { zipEntries } from '../test/fixtures/zip/buildZip.js';
import { postUpload } from '../test/ingest/uploadHelpers.js';
import { startTestApp } from '../test/support/server.js';
import { percentile } from './support/deviceUploads.js';
import { machine } from './support/service.js';

const arg = (args: string[], name: string, fallback: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;

export default async function hostileFiles(args: string[]): Promise<void> {
  const rows = Number(arg(args, 'rows', '10000'));
  const uploads = Number(arg(args, 'uploads', '8'));
  const t = await startTestApp();
  try {
    const a = await t.createTenant('hostile');
    const b = await t.createTenant('neighbour');
    const reader = await t.createUser(b.apiKey);
    const sender = await t.createUser(a.apiKey);
    const { token } = await t.mintToken(a.apiKey, sender.id, { scopes: ['upload'] });
    const readsWhile = async (work: Promise<unknown> | null, seconds = 2) => {
      const times: number[] = [];
      const began = performance.now();
      let done = false;
      void work?.finally(() => (done = true));
      const until = Date.now() + seconds * 1000;
      while (work ? !done : Date.now() < until) {
        const s = performance.now();
        const r = await t.call('GET', `/v1/users/${reader.id}/coverage`, { key: b.apiKey });
        if (r.statusCode !== 200) throw new Error(`neighbour read answered ${r.statusCode}`);
        times.push(performance.now() - s);
        await new Promise((r) => setTimeout(r, 20));
      }
      await work;
      return { times, ms: performance.now() - began };
    };
    const row = (label: string, { times, ms }: { times: number[]; ms: number }, answers = '') =>
      console.log(
        `| ${label} | ${(ms / 1000).toFixed(1)} s | ${times.length} | ${(times.length / (ms / 1000)).toFixed(1)} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${answers} |`,
      );
    const send = (slug: string, prefix: string, n: number, body: Buffer, contentType: string) =>
      Promise.all(Array.from({ length: n }, (_, i) => postUpload(t, slug, token, `${prefix}-${i}`, { body, contentType }).then((r) => r.statusCode)));

    console.log(`hostileFiles (${rows} rows a bomb, ${uploads} uploads at once), ${machine()}\n`);
    console.log('| tenant A sends | answered after | B reads | B reads/s | B p50 ms | B p99 ms | B max ms | A answered |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---|');
    row('nothing (2 s)', await readsWhile(null));
    const base = buildGadgetbridgeExport();
    for (const [label, bomb] of [['CHECK', withCheckBomb], ['generated-column', withGeneratedColumnBomb]] as const) {
      const body = bomb(base, rows);
      let answers: number[] = [];
      const phase = await readsWhile(send('device-c', label, uploads, body, 'application/vnd.sqlite3').then((a) => (answers = a)));
      row(`${uploads} device-c databases with a ${label} bomb (${Math.round(body.length / 1024)} KiB each)`, phase, answers.join(', '));
    }
    const hc = await zipEntries([{ name: 'health_connect_export.db', data: withGeneratedColumnBomb(buildHealthConnectDatabase(), rows) }]);
    let answers: number[] = [];
    const phase = await readsWhile(send('health-connect', 'hc', Math.max(1, uploads / 2), hc, 'application/zip').then((a) => (answers = a)));
    row(`${Math.max(1, uploads / 2)} Health Connect zips with a generated-column bomb`, phase, answers.join(', '));
  } finally {
    await t.close();
  }
}
