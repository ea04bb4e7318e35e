import type { EventStore } from '../../src/eventstore/eventStore.js';
import type { DataWritten, UploadAccepted, UploadEvent, UploadFinished, UploadState } from './upload.js';

export const MAX_ETL_ATTEMPTS = 5;

/** Backoff after the n-th failed attempt: 10 s, 40 s, 160 s, 640 s. */
export function etlBackoffMs(attempt: number): number {
  return 10_000 * 4 ** (attempt - 1);
}

/** What a run stored: records per kind, rejected lines, records already stored by an earlier upload, and the days they span. */
export type EtlTally = { records: Record<string, number>; rejected: number; unchanged: number; types: string[]; firstDay: string | null; lastDay: string | null };

export type EtlOutcome =
  | ({ kind: 'succeeded' } & EtlTally)
  /** The upload as a whole is unreadable as its format: no retry (contracts §12 `failed`). */
  | ({ kind: 'unreadable'; error: string } & EtlTally)
  /** `final`: no attempt follows whatever the count (the work queue gave up on the job: the ETL sweep). */
  | { kind: 'failed'; error: string; final?: boolean }
  | { kind: 'discarded'; reason: string };

/** Spec "ETL job": a job that failed 5 times is parked and waits for a retry. */
export function decideFinishEtlJob(state: UploadState, outcome: EtlOutcome, now: Date): UploadEvent[] {
  const a = state.accepted!;
  const base = { user_id: a.user_id, tenant_id: a.tenant_id };
  switch (outcome.kind) {
    case 'succeeded':
    case 'unreadable': {
      const tally = { provider: a.provider, attempt: state.attempt, records: outcome.records, rejected: outcome.rejected, unchanged: outcome.unchanged, finished_at: now.toISOString() };
      const events: UploadEvent[] = [
        outcome.kind === 'succeeded'
          ? { type: 'etl.job_succeeded', data: { ...base, ...tally } }
          : { type: 'etl.job_unreadable', data: { ...base, ...tally, error: outcome.error.slice(0, 1000) } },
      ];
      const status = outcome.kind === 'succeeded' ? 'done' : 'failed';
      if (a.tier === 'upload') events.push(finished(a, status, outcome, now));
      if (Object.values(outcome.records).some((n) => n > 0)) {
        events.push({
          type: 'data.written',
          data: { ...base, provider: a.provider, records: outcome.records, types: outcome.types, first_day: outcome.firstDay, last_day: outcome.lastDay },
        } satisfies DataWritten);
      }
      return events;
    }
    case 'failed': {
      const error = outcome.error.slice(0, 1000);
      if (state.attempt >= MAX_ETL_ATTEMPTS || outcome.final === true) {
        const parked: UploadEvent[] = [{ type: 'etl.job_parked', data: { ...base, attempt: state.attempt, error, parked_at: now.toISOString() } }];
        if (a.tier === 'upload') parked.push(finished(a, 'parked', null, now));
        return parked;
      }
      return [
        {
          type: 'etl.job_failed',
          data: { ...base, attempt: state.attempt, error, failed_at: now.toISOString(), next_attempt_at: new Date(now.getTime() + etlBackoffMs(state.attempt)).toISOString() },
        },
      ];
    }
    case 'discarded':
      return [{ type: 'etl.job_discarded', data: { ...base, reason: outcome.reason, at: now.toISOString() } }];
  }
}

function finished(a: UploadAccepted['data'], status: UploadFinished['data']['status'], tally: EtlTally | null, now: Date): UploadFinished {
  return {
    type: 'upload.finished',
    data: {
      user_id: a.user_id,
      tenant_id: a.tenant_id,
      provider: a.provider,
      upload_id: a.upload_id,
      status,
      records: tally?.records ?? {},
      unchanged: tally?.unchanged ?? 0,
      rejected: tally?.rejected ?? 0,
      at: now.toISOString(),
    },
  };
}

/**
 * Appended at the revision the claim left: a worker whose lease was taken over by another
 * fails here with a ConcurrencyError and its result is dropped (the other run writes the same
 * deterministic record events).
 */
export async function finishEtlJob(eventStore: EventStore, stream: string, state: UploadState, revision: number, outcome: EtlOutcome, now = new Date()) {
  const events = decideFinishEtlJob(state, outcome, now);
  return eventStore.appendToStream(stream, events, { expectedRevision: revision });
}
