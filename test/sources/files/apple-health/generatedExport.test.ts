import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeExportZip } from '../../../../bench/support/appleExportGenerator.js';
import { appleHealthImport } from '../../../../src/sources/files/apple-health/appleHealthDecoder.js';
import { fileByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import type { NormalizedRecord } from '../../../../commands/ingestion/records.js';

/** Issue 21 item 7: the benchmark's generated export is a real export to the decoder: everything in it decodes. */

const dir = mkdtempSync(join(tmpdir(), 'apple-generated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('apple-health: the generated export (bench/support/appleExportGenerator.ts)', () => {
  it('decodes whole from a zip file: every Record stored or rejected for its unknown type, every route and ECG read', async () => {
    const path = join(dir, 'export.zip');
    const counts = await writeExportZip(path, { targetBytes: 3 * 2 ** 20 });
    const byKind = new Map<string, NormalizedRecord[]>();
    const reasons = new Set<string>();
    let rejected = 0;
    for await (const item of appleHealthImport.decode(fileByteSource(path), { provider: 'apple-health', receivedAt: '2026-01-01T00:00:00.000Z', dataType: null })) {
      if ('record' in item) byKind.set(item.record.kind, [...(byKind.get(item.record.kind) ?? []), item.record]);
      else (rejected++, reasons.add(item.rejected.reason));
    }
    const n = (k: string) => byKind.get(k)?.length ?? 0;
    expect([...reasons]).toEqual(['unknown quantity type HKQuantityTypeIdentifierAppleMoveTime']);
    // A blood-pressure correlation gives an observation and its two member samples.
    expect(n('observation')).toBeGreaterThan(0);
    expect(n('quantity') + n('category') + rejected - 2 * n('observation')).toBe(counts.records);
    expect(n('workout')).toBe(counts.workouts);
    for (const w of byKind.get('workout') as Extract<NormalizedRecord, { kind: 'workout' }>[]) expect(w.route).toHaveLength(1800);
    expect(n('ecg')).toBe(counts.ecgs);
    expect(n('daily_summary')).toBe(counts.days);
    expect(n('heartbeat_series')).toBe(counts.days * 4);
    // One night per day from each of two sources (the phone's time in bed, the watch's stages).
    expect(n('sleep_session')).toBe(counts.days * 2);
  });
});
