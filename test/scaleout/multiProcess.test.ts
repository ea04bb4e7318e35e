import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { projections, recordProjections } from '../../projections/index.js';
import { SAMPLE_KEY_RUNS, storedLocators } from '../../projections/records/sampleBlocks/recentLocators.js';
import { SAMPLE_KEYS } from '../../projections/records/sampleBlocks/sampleBlock.js';
import { SqliteEventStore } from '../../src/eventstore/sqliteEventStore.js';
import { projectionStatus } from '../../src/projector/projectorRuntime.js';
import type { ReadStore } from '../../src/readstore/readStore.js';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { runCli } from '../cli/cliProcess.js';
import { fixtureA, fixtureB, requestFor } from '../ingest/uploadHelpers.js';
import { httpCall } from '../support/httpCall.js';
import { tempDir } from '../support/tmp.js';
import { until } from '../support/until.js';
import { SqliteWorkQueue } from '../../src/workqueue/sqliteWorkQueue.js';
import { freePort, npmStartArgs } from '../../bench/support/service.js';
import { Receiver } from '../webhooks/receiver.js';
import { DELIVERIES, type DeliveryDoc } from '../../src/webhooks/deliveryDocs.js';
import { connectOura, gatedOura, pullAttempts } from './syncPulls.js';

/**
 * Issue 14, "several service processes": three service processes (`src/main.ts`, real child
 * processes on their own ports) share one embedded DATA_DIR. Writes and device uploads go to all
 * three; the first one, which took every lease when it started alone, is killed with SIGKILL
 * while uploads are being normalised and projected. The other two take its work over (leases of
 * 2 s here; the survivors see that the holder's process is gone and need not wait even that),
 * every job and the user deletion finish, and every read model equals a clean rebuild
 * from the events: nothing skipped, nothing applied twice. Every wait is for a condition, under
 * one generous limit. Webhook deliveries (issue 26) go to a receiver throughout: every one ends
 * delivered by the survivors, and none is received twice after the kill (outcomes are fenced by
 * the engine's lease; only the dead process's attempts in flight may be repeated). Provider
 * pulls (issue 26) run on the work queue: six connections to a sandbox Oura whose answers wait
 * until the kill, so the dead process holds pulls' leases mid-pull; the survivors take those
 * pulls over once their leases expire, every pull ends succeeded once, no live process's attempt
 * is ever taken over, and each connection holds the same records (nothing stored twice).
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const ADMIN_KEY = `svc_ak_${Array.from({ length: 43 }, (_, i) => BASE62[(i * 7 + 3) % 62]).join('')}`;
const LIMIT_MS = 150_000;

type Service = { port: number; child: ChildProcess; output: () => string };

/** The leases of the service's background work (src/readstore/leases.ts); ETL and deletion jobs are leased one by one on the work queue. */
const LEASES = [...projections.map((p) => p.name), 'webhook-dispatcher'];

async function leaseHolders(dataDir: string): Promise<Map<string, { holder: string; generation: number }>> {
  const reads = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
  try {
    const out = new Map<string, { holder: string; generation: number }>();
    for (const name of LEASES) {
      const lease = await reads.leases().get(name);
      if (lease && lease.expiresAt > Date.now()) out.set(name, { holder: lease.holder.split('/')[0]!, generation: lease.generation });
    }
    return out;
  } finally {
    await reads.close();
  }
}

function startService(dataDir: string, port: number, instance: string, extra: Record<string, string>): Service {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'warn',
    LEASE_MS: '2000',
    LEASE_RENEW_MS: '500',
    INSTANCE_ID: instance,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...extra,
  };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'SEALING_KEY', 'DEMO']) delete env[k];
  const child = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (output += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (output += s));
  return { port, child, output: () => output.slice(-4000) };
}

const call = (s: Service, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
  httpCall(`http://127.0.0.1:${s.port}`, method, path, key, body, headers);

async function expectCall(s: Service, status: number, method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) {
  const res = await call(s, method, path, key, body, headers);
  if (res.status !== status) throw new Error(`${method} ${path} on :${s.port}: expected ${status}, got ${res.status}: ${JSON.stringify(res.json())}`);
  return res.json();
}

async function upload(s: Service, token: string, slug: string, payload: Buffer): Promise<void> {
  const req = requestFor(slug, payload);
  await expectCall(s, 202, 'POST', `/v1/ingest/${slug}`, token, req.body, { 'content-type': req.contentType, 'upload-id': `mp-${randomUUID()}`, ...(req.headers ?? {}) });
}

/**
 * Every collection of every projection, sorted by _id, one JSON line per document; the samples'
 * locators as one set (sample_keys and the recent tier's runs, storedLocators: how they split
 * depends on where the live merges fell, and a rebuild writes sample_keys only).
 */
async function dumpReadModels(readStore: ReadStore): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const p of projections) {
    for (const c of p.collections) {
      if (c.name === SAMPLE_KEY_RUNS) continue;
      const lines: string[] = [];
      if (c.name === SAMPLE_KEYS) for await (const k of storedLocators(readStore)) lines.push(JSON.stringify(k));
      else for (const d of await readStore.find(c.name, { sort: [['_id', 1]] })) lines.push(JSON.stringify(d));
      out.set(`${p.name}/${c.name}`, lines);
    }
  }
  return out;
}

function firstDifference(live: string[], rebuilt: string[]): string {
  for (let i = 0; i < Math.max(live.length, rebuilt.length); i++) {
    if (live[i] !== rebuilt[i]) return `counts ${live.length}/${rebuilt.length}; first difference at #${i}: live ${live[i]} vs rebuilt ${rebuilt[i]}`;
  }
  return 'equal';
}

describe('several service processes on one embedded DATA_DIR (issue 14)', () => {
  it('share the work, take a killed process’s work over, and end with every read model equal to a clean rebuild', { timeout: LIMIT_MS + 60_000 }, async () => {
    const deadline = Date.now() + LIMIT_MS;
    const dataDir = tempDir('wellstream-scaleout-');
    const services: Service[] = [];
    const receiver = await Receiver.start();
    const oura = await gatedOura();
    try {
      // The first starts alone (it creates the data directory and its keys, and takes every lease).
      services.push(startService(dataDir, await freePort(), 'p0', oura.env));
      const ready = (s: Service) => until(`:${s.port} listening\n${s.output()}`, deadline, async () => (await fetch(`http://127.0.0.1:${s.port}/v1/users`)).status === 401);
      await ready(services[0]!);
      await until('the first process holds every lease', deadline, async () => {
        const held = await leaseHolders(dataDir);
        return LEASES.every((n) => held.get(n)?.holder === 'p0');
      });
      services.push(startService(dataDir, await freePort(), 'p1', oura.env), startService(dataDir, await freePort(), 'p2', oura.env));
      await Promise.all(services.slice(1).map(ready));
      // The newcomers find the work taken: one writer each.
      expect([...(await leaseHolders(dataDir)).values()].every((l) => l.holder === 'p0')).toBe(true);
      const [doomed, a, b] = services as [Service, Service, Service];
      const tenant = await expectCall(a, 201, 'POST', '/v1/admin/tenants', ADMIN_KEY, { name: 'scale-out' });
      const apiKey = tenant.api_key as string;
      const hook = await expectCall(a, 201, 'POST', '/v1/webhooks', apiKey, { url: receiver.url('/mp'), event_types: ['user.created', 'user.deleted', 'data.written', 'upload.finished'] });
      receiver.trust('/mp', hook.secret as string);

      // Users made through every process, each with an upload token.
      const users: { id: string; token: string }[] = [];
      for (let i = 0; i < 6; i++) {
        const via = services[i % 3]!;
        const user = await expectCall(via, 201, 'POST', '/v1/users', apiKey, { external_ref: `mp-${i}` });
        const token = await expectCall(via, 201, 'POST', `/v1/users/${String(user.id)}/tokens`, apiKey, { scopes: ['upload'] });
        users.push({ id: user.id as string, token: token.token as string });
      }

      // Pulls: users connected to the gated Oura through the process about to die. It holds the
      // reactors' lease, so it queues their backfills, enqueues their jobs and claims the first
      // ones at once; every pull then waits on the provider.
      const pullers: string[] = [];
      for (let i = 0; i < 6; i++) {
        const user = await expectCall(doomed, 201, 'POST', '/v1/users', apiKey, { external_ref: `mp-pull-${i}` });
        await connectOura(`http://127.0.0.1:${doomed.port}`, apiKey, user.id as string);
        pullers.push(user.id as string);
      }
      await until('the doomed process is in the middle of a pull', deadline, async () => {
        const events = new SqliteEventStore({ path: join(dataDir, 'events.sqlite') });
        try {
          return (await pullAttempts(events)).some((x) => x.worker.startsWith('p0/') && x.ended === null) && oura.requests() > 0;
        } finally {
          await events.close();
        }
      });

      // First wave through every process; then the process holding every lease dies mid-work,
      // with a user's deletion just requested through it.
      for (const [i, u] of users.entries()) await upload(services[i % 3]!, u.token, 'device-a', fixtureA());
      const erased = users[5]!;
      const deletion = await expectCall(doomed, 202, 'DELETE', `/v1/users/${erased.id}`, apiKey);
      doomed.child.kill('SIGKILL');
      await new Promise((r) => doomed.child.once('exit', r));
      const killedAt = Date.now();
      oura.release();

      // Second wave through the survivors, while they take the dead process's leases over.
      const kept = users.slice(0, 5);
      for (const [i, u] of kept.entries()) await upload([a, b][i % 2]!, u.token, 'device-b', fixtureB());
      await expectCall(b, 201, 'POST', '/v1/users', apiKey, { external_ref: 'mp-late' });

      await until('the deletion finished', deadline, async () => {
        const job = await expectCall(a, 200, 'GET', `/v1/deletions/${String(deletion.job_id)}`, apiKey);
        return job.status === 'done' || job.status === 'failed' ? job : undefined;
      }).then((job) => expect(job.status).toBe('done'));
      for (const u of kept) {
        await until(`user ${u.id}'s uploads normalised`, deadline, async () => {
          const c = await expectCall([a, b][users.indexOf(u) % 2]!, 200, 'GET', `/v1/users/${u.id}/coverage`, apiKey, undefined, {});
          return c.pending_jobs === 0 && (c.days as unknown[]).length > 0;
        });
      }
      // Every pull ended, taken over from the dead process where it held one; its payloads normalised.
      for (const id of pullers) {
        await until(`user ${id}'s backfill pulled`, deadline, async () => {
          const runs = (await expectCall(a, 200, 'GET', `/v1/users/${id}/sync-runs`, apiKey)).data as { trigger: string; status: string }[];
          return runs.some((r) => r.trigger === 'backfill') && runs.every((r) => r.status === 'succeeded');
        });
        await until(`user ${id}'s pulled payloads normalised`, deadline, async () => (await expectCall(b, 200, 'GET', `/v1/users/${id}/coverage`, apiKey)).pending_jobs === 0);
      }
      // Every projection caught up with the log (read from the files, as a third reader).
      {
        const events = new SqliteEventStore({ path: join(dataDir, 'events.sqlite') });
        const reads = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
        try {
          let behind: unknown[] = [];
          await until(`every projection caught up (${JSON.stringify(behind)})`, deadline, async () => {
            behind = (await projectionStatus(events, reads, projections)).filter((p) => p.lag !== 0 || p.status === 'rebuilding');
            return behind.length === 0;
          }).catch((err: Error) => {
            throw new Error(`${err.message}: ${JSON.stringify(behind)}\n${a.output()}\n${b.output()}`);
          });
          const jobs = await reads.find<{ _id: string; status: string; attempts: number; user_id: string }>('etl_jobs');
          // The erased user's job went with the user; every other job ran to its end.
          expect(jobs.filter((j) => kept.some((u) => u.id === j.user_id)).length).toBe(kept.length * 2);
          expect(jobs.filter((j) => j.status !== 'done')).toEqual([]);
          const outcomes = (await events.readAll({ maxCount: 100_000, filter: { eventTypes: ['etl.job_succeeded', 'etl.job_discarded'] } })).map((e) => e.streamName);
          expect(new Set(outcomes).size).toBe(outcomes.length);
          // Pulls: the dead process was pulling when it died, and only its attempts were abandoned
          // (taken over once their leases expired); no attempt of a live process was ever overtaken,
          // and each run succeeded exactly once.
          const attempts = await pullAttempts(events);
          const dead = (x: { worker: string }) => x.worker.startsWith('p0/');
          expect(attempts.filter((x) => dead(x) && x.ended === 'abandoned').length).toBeGreaterThan(0);
          expect(attempts.filter((x) => !dead(x) && x.ended !== 'succeeded')).toEqual([]);
          const succeeded = new Map<string, number>();
          for (const x of attempts) if (x.ended === 'succeeded') succeeded.set(x.stream, (succeeded.get(x.stream) ?? 0) + 1);
          expect([...succeeded.values()].every((n) => n === 1)).toBe(true);
          expect(new Set(attempts.map((x) => x.stream)).size).toBe(succeeded.size);
          // On the work queue (issue 26): every ETL and deletion job ended, none dead, none left running or waiting.
          const queue = new SqliteWorkQueue({ path: join(dataDir, 'jobs.sqlite') });
          try {
            const counts = await queue.counts();
            expect(counts.filter((c) => ['etl', 'deletion', 'sync.run'].includes(c.kind) && c.state !== 'completed')).toEqual([]);
            expect(counts.find((c) => c.kind === 'sync.run')?.count).toBeGreaterThanOrEqual(pullers.length);
            expect(counts.find((c) => c.kind === 'deletion')?.count).toBe(1);
          } finally {
            await queue.close();
          }
        } finally {
          await events.close();
          await reads.close();
        }
      }
      // Every delivery ends delivered, by the survivors where the dead process had not; none twice after the kill.
      {
        const reads = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
        try {
          let open: unknown[] = [];
          const docs = await until(`every webhook delivery done (${JSON.stringify(open)})`, deadline, async () => {
            const all = await reads.find<DeliveryDoc>(DELIVERIES, { filter: { endpoint_id: hook.id as string }, fields: ['status', 'event_id', 'event_type', 'attempts'] });
            open = all.filter((d) => d.status !== 'done').slice(0, 5);
            return all.length > 0 && open.length === 0 ? all : undefined;
          });
          const received = new Set(receiver.received.filter((x) => x.verified !== null).map((x) => x.headers['webhook-id'] as string));
          expect(docs.filter((d) => !received.has(d.event_id))).toEqual([]);
          expect(receiver.received.filter((x) => x.verified === null)).toEqual([]);
          const afterKill = new Map<string, number>();
          for (const x of receiver.received) if (x.at > killedAt) afterKill.set(x.headers['webhook-id'] as string, (afterKill.get(x.headers['webhook-id'] as string) ?? 0) + 1);
          expect([...afterKill].filter(([, n]) => n > 1)).toEqual([]);
          // The second wave was delivered after the kill, by the survivors.
          expect(docs.some((d) => d.event_type === 'upload.finished' && (afterKill.get(d.event_id) ?? 0) === 1)).toBe(true);
        } finally {
          await reads.close();
        }
      }
      // The dead process's work moved to the survivors, each lease in a new generation.
      const held = await leaseHolders(dataDir);
      expect(LEASES.filter((n) => !['p1', 'p2'].includes(held.get(n)?.holder ?? '') || held.get(n)!.generation < 2)).toEqual([]);
      for (const s of [a, b]) s.child.kill('SIGTERM');
      await Promise.all([a, b].map((s) => (s.child.exitCode !== null ? null : new Promise((r) => s.child.once('exit', r)))));

      const live = await (async () => {
        const reads = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
        try {
          return await dumpReadModels(reads);
        } finally {
          await reads.close();
        }
      })();
      const rebuild = await runCli(dataDir, 'projections', 'rebuild', '--json', '--no-progress');
      expect(rebuild.code, rebuild.stderr).toBe(0);
      const reads = new SqliteReadStore({ path: join(dataDir, 'readmodels.sqlite') });
      try {
        const rebuilt = await dumpReadModels(reads);
        const differences = [...live.keys()].map((k) => [k, firstDifference(live.get(k)!, rebuilt.get(k)!)]).filter(([, d]) => d !== 'equal');
        expect(differences).toEqual([]);
        // Every connection pulled the same sandbox account: the same records each, none stored twice by a taken-over pull.
        const records = recordProjections.flatMap((p) => p.collections.map((c) => live.get(`${p.name}/${c.name}`) ?? []));
        const perPuller = pullers.map((id) => records.reduce((n, docs) => n + docs.filter((d) => d.includes(`"user_id":"${id}"`)).length, 0));
        expect(perPuller[0]).toBeGreaterThan(0);
        expect(new Set(perPuller).size).toBe(1);
        // The test read something: the kept users' records are there.
        expect([...live.entries()].filter(([k, v]) => k.startsWith('samples/') && v.length > 0).length).toBeGreaterThan(0);
      } finally {
        await reads.close();
      }
    } finally {
      for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      await receiver.close();
      oura.release();
      await oura.sandbox.close();
    }
  });
});
