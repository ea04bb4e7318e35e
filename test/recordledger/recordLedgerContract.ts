import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EARLIER_FINGERPRINT_BYTES, FINGERPRINT_BYTES, JOB_TAG_BYTES, MAX_LEDGER_BATCH, shortened, type RecordLedger } from '../../src/recordledger/recordLedger.js';

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
  /**
   * Another ledger (closed with this one), holding these rows (20-byte fingerprints) as an earlier
   * version wrote them: before fingerprints were clustered (it answers `unclusteredRows`), or
   * (`clustered`) the version just before their short form.
   */
  withOlderRows(rows: { fp: Buffer; job: Buffer; committed: boolean }[], clustered?: boolean): Promise<RecordLedger>;
}>;

const fp = () => randomBytes(FINGERPRINT_BYTES);
/** A fingerprint as the versions before issue 38's short form computed it. */
const earlier = () => randomBytes(EARLIER_FINGERPRINT_BYTES);
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

    it('a record another job committed answers true, a new one false and is claimed (contracts §13 unchanged)', () =>
      withLedger(async ({ ledger }) => {
        const [a, b, c] = [fp(), fp(), fp()];
        const [first, second] = [job(), job()];
        expect(await ledger.note(first, [a, b])).toEqual([false, false]);
        await ledger.commit(first, [a, b]);
        expect(await ledger.note(second, [a, c, b])).toEqual([true, false, true]);
        await ledger.commit(second, [c]);
        expect(await ledger.note(job(), [c])).toEqual([true]);
      }));

    it('contracts §19 (issue 35): a claim never committed (its job parked before appending the records) makes no other job skip them', () =>
      withLedger(async ({ ledger }) => {
        const [a, b] = [fp(), fp()];
        const [parked, later] = [job(), job()];
        expect(await ledger.note(parked, [a, b])).toEqual([false, false]);
        // Only `a` was appended before the job parked.
        await ledger.commit(parked, [a]);
        expect(await ledger.note(later, [a, b])).toEqual([true, false]);
        // A commit names only the job's own claims: committing what another job claimed changes nothing.
        await ledger.commit(job(), [b]);
        expect(await ledger.note(job(), [b])).toEqual([false]);
      }));

    it("a job's own claims answer false again, committed or not, so a run resumed after a crash decides as the first did", () =>
      withLedger(async ({ ledger }) => {
        const [mine, theirs] = [job(), job()];
        const [a, b, c] = [fp(), fp(), fp()];
        await ledger.note(theirs, [c]);
        await ledger.commit(theirs, [c]);
        expect(await ledger.note(mine, [a, b])).toEqual([false, false]);
        await ledger.commit(mine, [a]);
        // Another job commits `b` meanwhile: `mine` claimed it first, so it still writes it.
        await ledger.note(theirs, [b]);
        await ledger.commit(theirs, [b]);
        expect(await ledger.note(mine, [b, a, c, fp()])).toEqual([false, false, true, false]);
      }));

    it('the same fingerprint twice in one batch answers false twice and is claimed once', () =>
      withLedger(async ({ ledger, rows }) => {
        const a = fp();
        const tag = job();
        expect(await ledger.note(tag, [a, a])).toEqual([false, false]);
        expect((await rows()).filter((r) => r.fp.equals(a))).toHaveLength(1);
        await ledger.commit(tag, [a]);
        expect(await ledger.note(job(), [a])).toEqual([true]);
      }));

    it('an empty batch answers nothing; a batch over the limit, a short fingerprint or job tag is refused and notes nothing', () =>
      withLedger(async ({ ledger, rows }) => {
        expect(await ledger.note(job(), [])).toEqual([]);
        const over = Array.from({ length: MAX_LEDGER_BATCH + 1 }, fp);
        await expect(ledger.note(job(), over)).rejects.toThrow(RangeError);
        await expect(ledger.note(job(), [fp(), Buffer.alloc(3)])).rejects.toThrow(RangeError);
        await expect(ledger.note(Buffer.from('upload-stream-name'), [fp()])).rejects.toThrow(RangeError);
        await expect(ledger.commit(job(), over)).rejects.toThrow(RangeError);
        expect(await rows()).toEqual([]);
      }));

    it('two jobs noting the same records at once both claim them (neither committed yet), and each keeps its answers', () =>
      withLedger(async ({ ledger, another }) => {
        const other = await another();
        try {
          const shared = Array.from({ length: 50 }, fp);
          const [x, y] = [job(), job()];
          const [ax, ay] = await Promise.all([ledger.note(x, shared), other.note(y, [...shared].reverse())]);
          // Neither may count on the other's records before they are in the log: both write them.
          expect([...ax, ...ay].every((known) => !known)).toBe(true);
          await Promise.all([ledger.commit(x, shared), other.commit(y, shared)]);
          expect(await ledger.note(x, shared)).toEqual(ax);
          expect(await other.note(y, [...shared].reverse())).toEqual(ay);
          expect(await ledger.note(job(), shared)).toEqual(shared.map(() => true));
        } finally {
          await other.close();
        }
      }));

    it('rows outlive the connection that noted them (another process sees them)', () =>
      withLedger(async ({ ledger, another }) => {
        const a = fp();
        const tag = job();
        await ledger.note(tag, [a]);
        await ledger.commit(tag, [a]);
        const other = await another();
        try {
          expect(await other.note(job(), [a])).toEqual([true]);
        } finally {
          await other.close();
        }
      }));

    it('issue 38: a ledger created by this version holds no rows of the older form, and says so', () =>
      withLedger(async ({ ledger }) => {
        expect(ledger.unclusteredRows).toBe(false);
      }));

    it("issue 38: rows written before fingerprints were clustered still count: another job's commit of a record's older form answers true, this job's own claim of it false, and only the current form is claimed", () =>
      withLedger(async ({ withOlderRows }) => {
        const [theirs, mine, later] = [job(), job(), job()];
        // Older forms: `a` committed by another job, `b` claimed by `mine` (a run resumed across the upgrade), `c` only claimed.
        const [a, b, c, d] = [earlier(), earlier(), earlier(), earlier()];
        // As the caller hands them now (src/processes/etl/recordLedger.ts).
        const [sa, sb, sc, sd] = [a, b, c, d].map(shortened);
        const [na, nb, nc, nd] = [fp(), fp(), fp(), fp()];
        const ledger = await withOlderRows([
          { fp: a, job: theirs, committed: true },
          { fp: b, job: mine, committed: false },
          { fp: b, job: theirs, committed: true },
          { fp: c, job: theirs, committed: false },
        ]);
        expect(ledger.unclusteredRows).toBe(true);
        expect(await ledger.note(mine, [na, nb, nc, nd], [sa!, sb!, sc!, sd!])).toEqual([true, false, false, false]);
        // The current forms of what `mine` writes are claimed, and count once committed.
        await ledger.commit(mine, [nb, nc, nd]);
        expect(await ledger.note(later, [na, nb, nc, nd], [sa!, sb!, sc!, sd!])).toEqual([true, true, true, true]);
        // Without the older forms only the current ones answer.
        expect(await ledger.note(job(), [na, nb])).toEqual([false, true]);
      }));

    it("issue 38: rows the version before short fingerprints wrote (20 bytes, clustered) answer as before in their shortened form: another job's commit true, this job's own claim false, another's claim nothing", () =>
      withLedger(async ({ withOlderRows }) => {
        const [theirs, mine] = [job(), job()];
        const [a, b, c] = [earlier(), earlier(), earlier()];
        const ledger = await withOlderRows(
          [
            { fp: a, job: theirs, committed: true },
            { fp: b, job: mine, committed: true },
            { fp: b, job: theirs, committed: true },
            { fp: c, job: theirs, committed: false },
          ],
          true,
        );
        expect(ledger.unclusteredRows).toBe(false);
        const [sa, sb, sc] = [a, b, c].map(shortened) as [Buffer, Buffer, Buffer];
        expect(await ledger.note(mine, [sa, sb, sc])).toEqual([true, false, false]);
        // `mine` claimed `c` now: its commit counts for the next job, as `theirs`'s old claim did not.
        await ledger.commit(mine, [sc]);
        expect(await ledger.note(job(), [sa, sb, sc])).toEqual([true, true, true]);
        // `theirs` resumed: its own rows answer false, committed or not.
        expect(await ledger.note(theirs, [sa, sb, sc])).toEqual([false, false, false]);
      }));

    it('a row is only the fingerprint and job tag it was given: nothing names a user, a job or a value (erasure by the data key, docs/erasure.md)', () =>
      withLedger(async ({ ledger, rows }) => {
        const [a, b] = [fp(), fp()];
        const tag = job();
        await ledger.note(tag, [a, b]);
        await ledger.commit(tag, [a]);
        const stored = await rows();
        expect(stored.map((r) => r.fp.toString('hex')).sort()).toEqual([a, b].map((x) => x.toString('hex')).sort());
        for (const r of stored) expect(r.job.equals(tag)).toBe(true);
      }));
  });
}
