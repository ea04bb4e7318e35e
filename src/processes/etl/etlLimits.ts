import type { Config } from '../../config.js';
import { BULK_UPLOAD_BYTES } from './etlTask.js';

/** Which bound an attempt crossed (contracts §18): the word the Upload's `error` starts with. */
export type EtlLimit = 'deadline' | 'memory';

/**
 * An ETL attempt stopped by its bound: its worker was terminated. The upload is failed at once
 * (not retried: the same file crosses the same bound again), the message naming the bound.
 */
export class EtlAttemptStopped extends Error {
  override name = 'EtlAttemptStopped';
  constructor(
    readonly limit: EtlLimit,
    message: string,
  ) {
    super(message);
  }
}

export function deadlineExceeded(deadlineMs: number): EtlAttemptStopped {
  return new EtlAttemptStopped('deadline', `deadline: processing this upload took longer than ${Math.round(deadlineMs / 1000)} s`);
}

export function memoryExceeded(memoryMb: number): EtlAttemptStopped {
  return new EtlAttemptStopped('memory', `memory: processing this upload needed more than ${memoryMb} MiB`);
}

/**
 * The wall-clock deadline of one attempt at an upload of `bytes`: the small jobs' deadline; a
 * bulk job's grows with its size at the operator's rate, up to the operator's cap. Only the
 * stored size enters it, which the uploader cannot make larger than what it sent.
 */
export function etlDeadlineMs(limits: Config['etlLimits'], bytes: number): number {
  if (!(bytes >= BULK_UPLOAD_BYTES)) return limits.deadlineMs;
  return Math.min(limits.bulkDeadlineMaxMs, limits.deadlineMs + Math.ceil((bytes / (1024 * 1024)) * limits.bulkMsPerMiB));
}
