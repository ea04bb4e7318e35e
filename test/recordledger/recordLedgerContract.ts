import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FINGERPRINT_BYTES, JOB_TAG_BYTES, MAX_LEDGER_BATCH, type RecordLedger } from '../../src/recordledger/recordLedger.js';

/**
 * The record ledger's contract (contracts §13 `unchanged`; issue 21), one suite for every adapter.
 * `rows` reads what the backend holds, to show a row is nothing but the opaque bytes it was given.
 */
export type OpenLedger = () => Promise<{
  ledger: RecordLedger;
  /** Another connection to the same ledger (another process, as far as the store can tell). */
  another(): Promise<RecordLedger>;
  rows(): Promise<{ fp: Buffer; job: Buffer }[]>;
  close(): Promise<void>;
}>;

const fp = () => randomBytes(FINGERPRINT_BYTES);
const job = () => randomBytes(JOB_TAG_BYTES);

export function recordLedgerContract(name: string, open: OpenLedger) {
  describe(`RecordLedger contract: ${name}`, () => {
    const withLedger = async (body: (o: Awaited<ReturnType<OpenLedger>>) => Promise<void>) => {
      const opened = await open();
      try {
        await body(opened);
      } finally {
        await opened.close();
      }
    };

    it('a record another job noted answers true, a new one false and is noted (contracts §13 unchanged)', () =>
      withLedger(async ({ ledger }) => {
        const [a, b, c] = [fp(), fp(), fp()];
        const [first, second] = [job(), job()];
        expect(await ledger.note(first, [a, b])).toEqual([false, false]);
        expect(await ledger.note(second, [a, c, b])).toEqual([true, false, true]);
        expect(await ledger.note(job(), [c])).toEqual([true]);
      }));

    it("a job's own rows answer false again, so a run resumed after a crash decides as the first did", () =>
      withLedger(async ({ ledger }) => {
        const [mine, theirs] = [job(), job()];
        const [a, b, c] = [fp(), fp(), fp()];
        await ledger.note(theirs, [c]);
        expect(await ledger.note(mine, [a, b])).toEqual([false, false]);
        expect(await ledger.note(mine, [b, a, c, fp()])).toEqual([false, false, true, false]);
      }));

    it('the same fingerprint twice in one batch answers false twice and is noted once', () =>
      withLedger(async ({ ledger, rows }) => {
        const a = fp();
        expect(await ledger.note(job(), [a, a])).toEqual([false, false]);
        expect((await rows()).filter((r) => r.fp.equals(a))).toHaveLength(1);
        expect(await ledger.note(job(), [a])).toEqual([true]);
      }));

    it('an empty batch answers nothing; a batch over the limit, a short fingerprint or job tag is refused and notes nothing', () =>
      withLedger(async ({ ledger, rows }) => {
        expect(await ledger.note(job(), [])).toEqual([]);
        const over = Array.from({ length: MAX_LEDGER_BATCH + 1 }, fp);
        await expect(ledger.note(job(), over)).rejects.toThrow(RangeError);
        await expect(ledger.note(job(), [fp(), Buffer.alloc(3)])).rejects.toThrow(RangeError);
        await expect(ledger.note(Buffer.from('upload-stream-name'), [fp()])).rejects.toThrow(RangeError);
        expect(await rows()).toEqual([]);
      }));

    it('two jobs noting the same records at once: each record has exactly one first job', () =>
      withLedger(async ({ ledger, another }) => {
        const other = await another();
        try {
          const shared = Array.from({ length: 50 }, fp);
          const [x, y] = [job(), job()];
          const [ax, ay] = await Promise.all([ledger.note(x, shared), other.note(y, [...shared].reverse())]);
          const ayInOrder = [...ay].reverse();
          // For every record one job saw it new (false) and the other saw it stored (true).
          for (let i = 0; i < shared.length; i++) expect([ax[i], ayInOrder[i]].sort()).toEqual([false, true]);
          // And both go on agreeing with what they were told.
          expect(await ledger.note(x, shared)).toEqual(ax);
          expect(await other.note(y, [...shared].reverse())).toEqual(ay);
        } finally {
          await other.close();
        }
      }));

    it('rows outlive the connection that noted them (another process sees them)', () =>
      withLedger(async ({ ledger, another }) => {
        const a = fp();
        await ledger.note(job(), [a]);
        const other = await another();
        try {
          expect(await other.note(job(), [a])).toEqual([true]);
        } finally {
          await other.close();
        }
      }));

    it('a row is only the fingerprint and job tag it was given: nothing names a user, a job or a value (erasure by the data key, docs/erasure.md)', () =>
      withLedger(async ({ ledger, rows }) => {
        const [a, b] = [fp(), fp()];
        const tag = job();
        await ledger.note(tag, [a, b]);
        const stored = await rows();
        expect(stored.map((r) => r.fp.toString('hex')).sort()).toEqual([a, b].map((x) => x.toString('hex')).sort());
        for (const r of stored) expect(r.job.equals(tag)).toBe(true);
      }));
  });
}
