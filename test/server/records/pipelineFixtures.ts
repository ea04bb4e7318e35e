import { randomUUID } from 'node:crypto';
import { INGESTED_EVENT, type NormalizedRecord, type QuantityRecord } from '../../../commands/ingestion/records.js';
import type { RecordsIngestedData, RecordsRejected } from '../../../commands/ingestion/ingestedEvents.js';
import type { UploadEvent } from '../../../commands/ingestion/upload.js';
import type { Event } from '../../../src/eventstore/eventStore.js';
import type { TestApp } from '../../support/server.js';

/** A quantity record as a parser produces it (commands/ingestion/records.ts). */
export function quantity(over: Partial<QuantityRecord> & { start_date: string; value: number }): QuantityRecord {
  const start = over.start_date;
  return {
    kind: 'quantity',
    external_id: randomUUID(),
    type: 'step_count',
    unit: 'count',
    end_date: new Date(Date.parse(start) + 60_000).toISOString(),
    source_name: null,
    source_bundle_id: null,
    device_model: null,
    product_type: null,
    was_user_entered: false,
    metadata: {},
    provider: 'device-a',
    source: 'apple',
    device: null,
    body_worn: true,
    ...over,
  };
}

type Who = { userId: string; tenantId: string };

/** Appends `samples.ingested` batches straight to the event store, one batch per provider, and waits for the read models. */
export async function ingestSamples(t: TestApp, who: Who, records: QuantityRecord[], ingestedAt = '2026-11-03T10:00:00.000Z'): Promise<void> {
  const byProvider = new Map<string, QuantityRecord[]>();
  for (const r of records) byProvider.set(r.provider, [...(byProvider.get(r.provider) ?? []), r]);
  for (const [provider, batch] of byProvider) {
    const data: RecordsIngestedData<QuantityRecord> = {
      job: `upload-test-${randomUUID()}`,
      user_id: who.userId,
      tenant_id: who.tenantId,
      provider,
      ingested_at: ingestedAt,
      batch: 0,
      records: batch,
    };
    await t.ctx.eventStore.appendToStream(`ingest-${who.userId}-${randomUUID().replace(/-/g, '')}`, [{ type: 'samples.ingested', data }]);
  }
  await t.ctx.projectors.waitForIdle();
}

/** Appends one `*.ingested` batch of any record kind, all of one provider, and waits for the read models. */
export async function ingestRecords(t: TestApp, who: Who, records: NormalizedRecord[], ingestedAt = '2026-11-03T10:00:00.000Z'): Promise<void> {
  const first = records[0];
  if (!first) return;
  const data: RecordsIngestedData = { job: `upload-test-${randomUUID()}`, user_id: who.userId, tenant_id: who.tenantId, provider: first.provider, ingested_at: ingestedAt, batch: 0, records };
  await t.ctx.eventStore.appendToStream(`ingest-${who.userId}-${randomUUID().replace(/-/g, '')}`, [{ type: INGESTED_EVENT[first.kind], data }]);
  await t.ctx.projectors.waitForIdle();
}

/** Appends a `records.rejected` batch (spec "Coverage report": rejected_records). */
export async function rejectLines(t: TestApp, who: Who, provider: string, items: { key: string; location?: string; reason?: string }[]): Promise<void> {
  const event: RecordsRejected = {
    type: 'records.rejected',
    data: {
      job: `upload-test-${randomUUID()}`,
      user_id: who.userId,
      tenant_id: who.tenantId,
      provider,
      batch: 0,
      items: items.map((i) => ({ key: i.key, location: i.location ?? '1', reason: i.reason ?? 'not JSON', excerpt: '{oops' })),
      at: '2026-11-03T10:00:00.000Z',
    },
  };
  await t.ctx.eventStore.appendToStream(`ingest-${who.userId}-${randomUUID().replace(/-/g, '')}`, [event as unknown as Event]);
  await t.ctx.projectors.waitForIdle();
}

export type JobState = 'pending' | 'running' | 'parked' | 'done';

/**
 * Creates an ETL job by appending `upload.accepted` (and what brings it to `state`) to an
 * `upload-…` stream; returns the stream. The ETL worker must be stopped by the caller, or it
 * would pick the job up.
 */
export async function createJob(t: TestApp, who: Who, provider: string, state: JobState, acceptedAt = '2026-11-03T10:00:00.000Z', bytes = 10): Promise<string> {
  const stream = `upload-${who.userId}-${randomUUID().replace(/-/g, '')}`;
  const base = { user_id: who.userId, tenant_id: who.tenantId };
  const events: UploadEvent[] = [
    {
      type: 'upload.accepted',
      data: {
        ...base,
        upload_id: randomUUID(),
        provider,
        object_key: `raw/${randomUUID()}`,
        sha256: '0'.repeat(64),
        bytes,
        content_type: 'application/gzip',
        tier: 'upload',
        accepted_at: acceptedAt,
        token_id: randomUUID(),
      },
    },
  ];
  if (state !== 'pending') {
    events.push({ type: 'etl.job_started', data: { ...base, attempt: 1, worker: 'test', started_at: acceptedAt, lease_until: '2999-01-01T00:00:00.000Z' } });
  }
  if (state === 'parked') events.push({ type: 'etl.job_parked', data: { ...base, attempt: 5, error: 'payload unreadable', parked_at: acceptedAt } });
  if (state === 'done') {
    events.push({
      type: 'etl.job_succeeded',
      data: { ...base, provider, attempt: 1, records: {}, rejected: 0, finished_at: acceptedAt },
    });
  }
  await t.ctx.eventStore.appendToStream(stream, events as unknown as Event[]);
  await t.ctx.projectors.waitForIdle();
  return stream;
}
