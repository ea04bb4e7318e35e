import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { etlDeadlineMs } from '../../../src/processes/etl/etlLimits.js';
import { BULK_UPLOAD_BYTES } from '../../../src/processes/etl/etlTask.js';

/**
 * contracts §18: every attempt has a wall-clock deadline. A small job's is ETL_DEADLINE_S; a bulk
 * job's grows with the size stored (the operator's rate, not the uploader's) up to the operator's cap.
 */
const limits = loadConfig({ DATA_DIR: '/tmp/unused', ETL_DEADLINE_S: '120', ETL_BULK_SECONDS_PER_MIB: '30', ETL_BULK_DEADLINE_MAX_S: '7200' } as NodeJS.ProcessEnv).etlLimits;
const MiB = 1024 * 1024;

describe('ETL deadlines (contracts §18)', () => {
  it('contracts §18: a small job has ETL_DEADLINE_S; a bulk job that plus ETL_BULK_SECONDS_PER_MIB per MiB, never more than ETL_BULK_DEADLINE_MAX_S', () => {
    expect(etlDeadlineMs(limits, 10)).toBe(120_000);
    expect(etlDeadlineMs(limits, BULK_UPLOAD_BYTES - 1)).toBe(120_000);
    expect(etlDeadlineMs(limits, BULK_UPLOAD_BYTES)).toBe(150_000);
    expect(etlDeadlineMs(limits, 20 * MiB)).toBe(720_000);
    expect(etlDeadlineMs(limits, 200 * MiB)).toBe(6_120_000);
    expect(etlDeadlineMs(limits, 300 * MiB)).toBe(7_200_000);
    expect(etlDeadlineMs(limits, 20 * 1024 * MiB)).toBe(7_200_000);
  });

  it('contracts §18: the defaults are 120 s, 30 s per MiB and 2 h, with a memory cap of 256 MiB', () => {
    expect(loadConfig({ DATA_DIR: '/tmp/unused' } as NodeJS.ProcessEnv).etlLimits).toEqual({ deadlineMs: 120_000, bulkMsPerMiB: 30_000, bulkDeadlineMaxMs: 7_200_000, memoryMb: 256 });
  });
});
