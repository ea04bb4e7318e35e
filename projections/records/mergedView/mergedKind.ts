import type { MergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { SourcePriorities } from '../../../src/merge/sourceRanking.js';
import type { Replay } from '../../../src/projector/projection.js';
import type { Change, Doc, ReadStore, SortSpec } from '../../../src/readstore/readStore.js';

/** A stored record as the merged view sees it: its interval, its stream, and the row it came from. */
export type Member = { key: string; start: number; end: number; source: string; body_worn: boolean; provider: string; hidden: boolean; excluded: boolean; row: Doc };

/** How one record kind is merged (spec "Merged view") and what else depends on its flags. */
export type MergedKind = {
  /** The kind's collection; its rows carry `hidden` (true: a better ranked source matches). */
  collection: string;
  /** Records with different values here never match (a quantity or category type); absent: all match. */
  partitionField?: string;
  startField: string;
  /** End of a record's interval; absent: start plus `lengthMs` (a daily summary's day). */
  endField?: string;
  lengthMs?: number;
  /**
   * The order of the kind's index from the start field on (with `user_id` and the partition field
   * before it), for finding the next stored record cheaply; default start field then `id`.
   */
  startOrder?: SortSpec;
  /** The match rule and source order of a partition under the user's priorities. */
  rule: (partition: string, priorities: SourcePriorities | undefined) => MergeRule;
  /** Where the projection keeps the user's source order (its own copy: projections share nothing). */
  ordersCollection: string;
  /** Fields besides the merge fields that `onDays` reads. */
  extraFields?: readonly string[];
  /** State of the re-evaluated days beyond the flags (statistics rollups), decided from their members. */
  onDays?: (owner: { userId: string; partition: string }, days: readonly string[], members: readonly Member[], out: Change[]) => void;
  /**
   * onDays for the quarter hours of one day a batch changed (`affected[q]` 1), the others kept as
   * stored: `rows` every row of the day as the batch leaves it, `decided` the flags the batch
   * decided (the other rows keep theirs). Present: a batch re-evaluates only the spans its rows
   * can change (batchSpans.ts); absent, whole days, as a source order, an erasure and the
   * per-sample model of the tests always do.
   */
  onQuarters?: (readStore: ReadStore, owner: { userId: string; partition: string }, day: string, affected: Uint8Array, rows: Iterable<Doc>, decided: ReadonlyMap<string, boolean>, out: Change[]) => Promise<void>;
  /**
   * How the kind's records are stored, when not one row per record in `collection` (rowSession):
   * a session per derivation reads them, takes the batch's records and keeps the flags it is told.
   * `replay`: the rebuild's, on every chunk of its replay (Replay). `batch`: one object per
   * derive call, the same for every session of its batch (a session may keep state between
   * batches that it checks against the store once per batch: the samples' recent locators).
   */
  session?: (readStore: ReadStore, kind: MergedKind, replay?: Replay, batch?: object) => MemberSession;
};

/** One partition of a user's records: how many, and the first and last start (ISO). */
export type PartitionSpan = { partition: string; count: number; first: string; last: string };

/**
 * The stored records of a kind as one derivation sees them: the rows it loads (and, once `stage`
 * took the batch's records, as they stand after the batch), and the flags it decides. Everything
 * it writes goes to `out` of `flag` and `flush`.
 */
export type MemberSession = {
  /**
   * Takes the batch's records from `evolved` (upserts of the kind's collection; those of users in
   * `erased` are not evaluated) and answers them as they will stand, then their stored rows as
   * they stood before (a record sent again may have moved), for the days to re-evaluate.
   */
  stage: (evolved: Change[], erased: ReadonlySet<string>) => Promise<Doc[]>;
  /** The records of a user's partition starting in [lo, hi) (epoch ms), without those of `erasedProvider`. */
  load: (userId: string, partition: string, lo: number, hi: number, erasedProvider?: string) => Promise<Map<string, Doc>>;
  partitions: (userId: string) => Promise<PartitionSpan[]>;
  /** Start (ISO) of the partition's first record at or after `from` (epoch ms), or null. */
  nextStart: (userId: string, partition: string, from: number) => Promise<string | null>;
  users: () => Promise<string[]>;
  /** The merged view's decision for a loaded row. */
  flag: (row: Doc, hidden: boolean, out: Change[]) => void;
  /** Writes what the flags and staged records changed since the last flush. */
  flush: (out: Change[]) => void | Promise<void>;
};
