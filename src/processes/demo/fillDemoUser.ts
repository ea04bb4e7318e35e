import { createHash, randomUUID } from 'node:crypto';
import { loadProviderDataHead } from '../../../commands/deletions/providerData.js';
import { refusalOf } from '../../../commands/deletions/registerDataWrite.js';
import { acceptUpload } from '../../../commands/ingestion/acceptUpload.js';
import { uploadStream } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { DomainError } from '../../../commands/shared/domainError.js';
import { externalRefState, externalRefStream } from '../../../commands/users/externalRef.js';
import { registerUser } from '../../../commands/users/registerUser.js';
import { recordProjections } from '../../../projections/index.js';
import type { EtlJobDoc } from '../../../projections/ingestion/etlJobsProjection.js';
import { hasSamplesOnDay } from '../../../queries/records/sampleBlocks.js';
import { getUser } from '../../../queries/users/getUser.js';
import type { DataKeys } from '../../crypto/dataKeys.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import type { ReadStore } from '../../readstore/readStore.js';
import { sealBytes } from '../../crypto/payloadCipher.js';
import { rawNamespace } from '../../rawstore/rawNamespaces.js';
import { deterministicId } from '../../shared/ids.js';
import type { DemoRecipe } from '../../sources/files/demo/demoParser.js';
import { DEMO_PROVIDER, type DemoPersona } from '../../sources/files/demo/personas.js';

/** What filling a demo user takes from the service (the service context hands it: src/server/appContext.ts). */
export type DemoFillContext = {
  eventStore: EventStore;
  readStore: ReadStore;
  rawStore: RawStore;
  dataKeys: DataKeys;
  etl: { kick(): void };
  settle: (position?: number, projections?: readonly string[]) => Promise<void>;
};

export type FillDemoUser = { tenantId: string; persona: DemoPersona; externalRef?: string; days: number; now?: Date };

export const defaultDemoRef = (persona: DemoPersona) => (persona === 'mix' ? 'demo-user' : `demo-${persona}`);

const DAY_MS = 86_400_000;

/** The `days` UTC days ending yesterday, oldest first. */
export function demoDays(days: number, now: Date): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: days }, (_, i) => new Date(today - (days - i) * DAY_MS).toISOString().slice(0, 10));
}

/**
 * Spec "Instance admin routes", demo user: the user with the external_ref (reused or created)
 * gets the persona's synthetic records for each of the days it has no demo data for yet. They go
 * the way an upload goes: a recipe payload sealed under the user's data key for the `demo`
 * provider, registered in the provider's ledger, accepted as an upload, normalised by the ETL into
 * sealed record events, applied by the record projections. Answers once they are readable.
 */
export async function fillDemoUser(ctx: DemoFillContext, input: FillDemoUser) {
  const now = input.now ?? new Date();
  const externalRef = input.externalRef ?? defaultDemoRef(input.persona);
  const user = await findOrCreateUser(ctx, input.tenantId, externalRef, now);
  const days = demoDays(input.days, now);
  const missing: string[] = [];
  for (const day of days) {
    if (!(await hasSamplesOnDay(ctx.readStore, user.id, DEMO_PROVIDER, day))) missing.push(day);
  }
  const anchor = user.created_at.slice(0, 10);
  const rowsWritten = missing.length ? await writeDays(ctx, { tenantId: input.tenantId, userId: user.id, persona: input.persona, days: missing, anchor }) : 0;
  return { user, days: input.days, rows_written: rowsWritten, persona: input.persona };
}

async function findOrCreateUser(ctx: DemoFillContext, tenantId: string, externalRef: string, now: Date) {
  const claim = (await loadState(ctx.eventStore, externalRefStream(tenantId, externalRef), externalRefState)).state;
  const existing = claim.claimedBy ? await getUser(ctx.readStore, tenantId, claim.claimedBy) : null;
  if (existing) return existing;
  const userId = randomUUID();
  const result = await registerUser(ctx.eventStore, { tenantId, userId, externalRef, at: now.toISOString() });
  await ctx.settle(result.position || undefined, ['users']);
  const user = await getUser(ctx.readStore, tenantId, userId);
  if (!user) throw new DomainError('conflict', 'the demo user could not be created');
  return user;
}

async function writeDays(ctx: DemoFillContext, w: { tenantId: string; userId: string; persona: DemoPersona; days: string[]; anchor: string }): Promise<number> {
  // Seeded by the user: the same user's days are the same whenever they are made.
  const recipe: DemoRecipe = { format: 'wellstream-demo/1', persona: w.persona, seed: w.userId, days: w.days, anchor: w.anchor };
  const payload = Buffer.from(JSON.stringify(recipe));
  const sha256 = createHash('sha256').update(payload).digest('hex');
  const head = await loadProviderDataHead(ctx.eventStore, w.userId, DEMO_PROVIDER);
  const refusal = refusalOf(head);
  if (refusal) throw refusal;
  const generation = head.generation;
  const uploadId = `demo-${w.persona}-${w.days[0]}-${w.days.length}-${sha256.slice(0, 16)}`;
  const dataKey = await ctx.dataKeys.issue({ userId: w.userId, provider: DEMO_PROVIDER, generation }, w.tenantId);
  const stored = await ctx.rawStore.put(sealBytes(dataKey.key, payload, dataKey.keyId), rawNamespace(w.userId, DEMO_PROVIDER, generation), { sha256 });
  const at = new Date().toISOString();
  const stream = uploadStream(w.userId, DEMO_PROVIDER, uploadId, generation);
  const result = await acceptUpload(ctx.eventStore, {
    tenantId: w.tenantId,
    userId: w.userId,
    // No token sent it: the demo's own, fixed per user, stands in the token's place.
    tokenId: deterministicId('demo-upload', w.userId),
    provider: DEMO_PROVIDER,
    uploadId,
    objectKey: stored.key,
    sha256,
    bytes: payload.length,
    contentType: 'application/json',
    generation,
    at,
  });
  if (result.replayed && result.accepted.object_key !== stored.key) await ctx.rawStore.delete(stored.key);
  await ctx.settle(result.position || undefined, ['etl_jobs']);
  ctx.etl.kick();
  const job = await jobEnded(ctx, stream);
  if (job.status !== 'done' || job.error) throw new Error(`demo data job ${job.status}: ${job.error ?? 'no records'}`);
  await ctx.settle(undefined, recordProjections.map((p) => p.name));
  return Object.values(job.records ?? {}).reduce((a, b) => a + b, 0);
}

/** The ETL job of the demo payload, once it ended (done, discarded or parked). */
async function jobEnded(ctx: DemoFillContext, stream: string, timeoutMs = 300_000): Promise<EtlJobDoc> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const job = await ctx.readStore.get<EtlJobDoc>('etl_jobs', stream);
    if (job && (job.status === 'done' || job.status === 'parked')) return job;
    if (Date.now() > until) throw new Error('the demo data job did not finish in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
