/**
 * `npm run bench -- rebuild [--events=1000000]`: fills an embedded store with N domain events
 * (users registering, tokens, sample batches), lets the live projectors build the read models,
 * digests every collection, then runs `npm run cli -- projections rebuild` (progress bar on the
 * terminal) and digests again. Prints the rebuild rate and whether the two states are identical.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext } from '../src/app/context.js';
import { createLogger } from '../src/app/logger.js';
import { loadConfig } from '../src/config.js';
import type { Event } from '../src/eventstore/eventStore.js';
import { readModelDigest as digest } from './support/readModelDigest.js';
import { machine } from './support/service.js';

export default async function main(args: string[]) {
  const total = Number(args.find((a) => a.startsWith('--events='))?.split('=')[1] ?? 1_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-rebuild-'));
  const env = { DATA_DIR: dir, LOG_LEVEL: 'warn' } as NodeJS.ProcessEnv;
  try {
    console.log(`machine: ${machine()}`);
    const ctx = await createContext(loadConfig(env), { log: createLogger('warn'), runBackground: 'projections' });
    const tenant = randomUUID();
    const t0 = performance.now();
    let written = 0;
    // Users with a token each; every 10th user also gets a batch of samples. Appends go out 500 at
    // a time so the store's group commit shares the fsyncs, as it does under real load.
    let inFlight: Promise<unknown>[] = [];
    let users = 0;
    while (written < total) {
      const userId = randomUUID();
      const events: Event[] = [
        { type: 'user.registered', data: { user_id: userId, tenant_id: tenant, external_ref: null, created_at: new Date().toISOString() } },
        {
          type: 'user.token_minted',
          data: { user_id: userId, tenant_id: tenant, token_id: randomUUID(), token_hash: createHash('sha256').update(userId).digest('hex'), scopes: ['read'], expires_at: '2030-01-01T00:00:00.000Z', issued_by: 'bench', created_at: new Date().toISOString() },
        },
      ];
      inFlight.push(ctx.eventStore.appendToStream(`user-${userId}`, events));
      written += events.length;
      if (++users % 10 === 0) {
        const base = Date.parse('2026-11-01T00:00:00.000Z') + written * 1000;
        const records = Array.from({ length: 8 }, (_, i) => ({
          kind: 'quantity', external_id: randomUUID(), type: 'heart_rate', value: 60 + i, unit: 'count/min',
          start_date: new Date(base + i * 5000).toISOString(), end_date: new Date(base + i * 5000).toISOString(),
          source_name: 'Watch', source_bundle_id: 'com.apple.health.x', device_model: 'Watch', product_type: 'Watch7,1', was_user_entered: false,
          metadata: {}, provider: 'device-a', source: 'apple', device: 'Watch (Watch7,1)', body_worn: true,
        }));
        inFlight.push(ctx.eventStore.appendToStream(`ingest-${userId}-bench`, [
          { type: 'samples.ingested', data: { job: 'bench', user_id: userId, tenant_id: tenant, provider: 'device-a', ingested_at: new Date().toISOString(), batch: 0, records } },
        ]));
        written++;
      }
      if (inFlight.length >= 500) {
        await Promise.all(inFlight);
        inFlight = [];
        process.stdout.write(`\rappended ${written}`);
      }
    }
    await Promise.all(inFlight);
    const appendS = (performance.now() - t0) / 1000;
    await ctx.projectors.waitForIdle(undefined, 30 * 60_000);
    const liveS = (performance.now() - t0) / 1000;
    const live = await digest(ctx.readStore);
    await ctx.close();
    console.log(`\n${written} events appended in ${appendS.toFixed(1)} s; live projections caught up at ${liveS.toFixed(1)} s; ${live.docs} documents`);

    const t1 = performance.now();
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'projections', 'rebuild'], { env: { ...process.env, ...env }, stdio: 'inherit' });
    const rebuildS = (performance.now() - t1) / 1000;
    if (run.status !== 0) throw new Error(`rebuild exited ${run.status}`);

    const ctx2 = await createContext(loadConfig(env), { log: createLogger('warn'), runBackground: 'none' });
    const rebuilt = await digest(ctx2.readStore);
    await ctx2.close();
    console.log(`\nrebuild of ${written} events: ${rebuildS.toFixed(1)} s (${Math.round(written / rebuildS)} events/s through every projection)`);
    console.log(`live state:    ${live.hash} (${live.docs} docs)`);
    console.log(`rebuilt state: ${rebuilt.hash} (${rebuilt.docs} docs)`);
    console.log(live.hash === rebuilt.hash ? 'IDENTICAL' : 'DIFFERENT');
    if (live.hash !== rebuilt.hash) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
