import { boundedInterval, unlistedByMergedView, type Interval } from '../../../src/merge/matchRules.js';
import type { MergeRule } from '../../../src/merge/sampleMergeRule.js';
import type { Stream } from '../../../src/merge/sourceRanking.js';
import type { Change, Doc, ReadStore } from '../../../src/readstore/readStore.js';
import { instantMs } from '../../../src/shared/isoInstant.js';
import { QUARTER_MS, QUARTERS_PER_DAY } from '../sampleRollups/rollupLayout.js';
import { utcDayOf } from '../recordDoc.js';
import type { Member, MemberSession, MergedKind } from './mergedKind.js';

const DAY_MS = 86_400_000;

/**
 * How many rows the merged view's derivation went through, since the process started: `built`
 * rows made into members (an interval parsed, an object made: the decided rows and, where streams
 * meet, their neighbours), `decided` rows whose flag it decided, `rolled` samples counted again
 * into statistics rollups. Read by `bench projector-inprocess` and the tests, per ingested record.
 */
export const derivationCounts = { built: 0, decided: 0, rolled: 0 };

/**
 * What one batch can change in one (user, partition) (docs/sample-blocks.md, "What a batch
 * re-evaluates"): the starts whose flag may change, the positions whose rollups change, and
 * whether its rows are of one stream.
 */
export type BatchReach = {
  userId: string;
  partition: string;
  /** Days (counted from the epoch) the spans touch. */
  days: Set<number>;
  /** [from, to) pairs of epoch ms on whole quarter hours, in the order added: every start whose flag a batch row can change. */
  spans: number[];
  /** The batch rows' starts, where they will stand and where they stood (a row sent again): their quarters' rollups change. */
  starts: number[];
  /** The batch rows' keys. */
  keys: Set<string>;
  /** The one stream of every batch row (both positions), null when they are of several. */
  stream: Stream | null;
  mixed: boolean;
};

export function newReach(userId: string, partition: string): BatchReach {
  return { userId, partition, days: new Set(), spans: [], starts: [], keys: new Set(), stream: null, mixed: false };
}

const floorQuarter = (ms: number): number => Math.floor(ms / QUARTER_MS) * QUARTER_MS;

/**
 * Notes a batch row (`interval` its bounded interval): the starts whose flag it can change are
 * those a record matching it may have, from its start back by the reach and the rule's lookback
 * to its end plus the reach (the bound the days were always chosen by), widened to whole quarters.
 */
export function addRow(t: BatchReach, row: Doc, { start, end }: Interval, rule: MergeRule): void {
  const from = floorQuarter(start - rule.reachMs - rule.lookbackMs);
  const to = floorQuarter(end + rule.reachMs) + QUARTER_MS;
  const n = t.spans.length;
  // A batch's rows come in time order mostly: extend the last span rather than add one per row.
  if (n && from <= t.spans[n - 1]! && from >= t.spans[n - 2]!) t.spans[n - 1] = Math.max(t.spans[n - 1]!, to);
  else t.spans.push(from, to);
  for (let d = Math.floor(from / DAY_MS), last = Math.floor((to - 1) / DAY_MS); d <= last; d++) t.days.add(d);
  t.starts.push(start);
  t.keys.add(row._id);
  const s = row as unknown as Stream;
  if (t.stream === null && !t.mixed) t.stream = { source: s.source, body_worn: s.body_worn === true, provider: s.provider };
  else if (t.stream !== null && !sameStream(t.stream, s.source, s.body_worn === true, s.provider)) {
    t.stream = null;
    t.mixed = true;
  }
}

/** The spans sorted and merged where they overlap or touch. */
export function mergedSpans(spans: readonly number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i < spans.length; i += 2) pairs.push([spans[i]!, spans[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [from, to] of pairs) {
    const n = out.length;
    if (n && from <= out[n - 1]!) out[n - 1] = Math.max(out[n - 1]!, to);
    else out.push(from, to);
  }
  return out;
}

const sameStream = (a: Stream, source: string, bodyWorn: boolean, provider: string): boolean => a.source === source && a.body_worn === bodyWorn && a.provider === provider;

/** Whether `ms` lies in one of the merged `spans` ([from, to) pairs, sorted). */
function inSpans(spans: readonly number[], ms: number): boolean {
  let lo = 0;
  let hi = spans.length >> 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[2 * mid + 1]! <= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo < spans.length >> 1 && spans[2 * lo]! <= ms;
}

/**
 * Re-evaluates what a batch changed in the run of days `spans` lies in (merged spans of one run):
 * `rows` every stored row that can match a start in them (as the batch leaves them). A row's flag
 * is decided again when its start lies in a span and a batch row of another stream can have
 * changed it: every such row when the batch's rows are of several streams; otherwise the batch's
 * own rows and the rows of other streams (a row is never hidden by its own stream, and the rule
 * compares each row with its neighbours only, so the rest keep the flags they have). Then the
 * rollups of every quarter hour holding a decided row or a batch row's start, old or new, are
 * written again (`kind.onQuarters`). The same flags and rollups as deciding the whole days
 * (the property tests compare it with the per-sample model, which does).
 */
export async function evaluateSpans(session: MemberSession, readStore: ReadStore, kind: MergedKind, rows: ReadonlyMap<string, Doc>, t: BatchReach, spans: readonly number[], rule: MergeRule, out: Change[]): Promise<void> {
  const all: Member[] = [];
  const decided: Member[] = [];
  const stream = t.stream;
  // Whether every row is of one stream: then only the quality flags leave rows out, no scan.
  let first: Doc | null = null;
  let oneStream = true;
  for (const r of rows.values()) {
    if (first === null) first = r;
    else if (r.source !== first.source || (r.body_worn === true) !== (first.body_worn === true) || r.provider !== first.provider) {
      oneStream = false;
      break;
    }
  }
  for (const r of rows.values()) {
    const start = instantMs(r[kind.startField] as string);
    const decide = inSpans(spans, start) && (stream === null || t.keys.has(r._id) || !sameStream(stream, r.source as string, r.body_worn === true, r.provider as string));
    if (!decide && oneStream) continue;
    const m = member(kind, r, start, rule);
    if (!oneStream) all.push(m);
    if (decide) decided.push(m);
  }
  derivationCounts.built += oneStream ? decided.length : all.length;
  derivationCounts.decided += decided.length;
  const hiddenOf = new Map<string, boolean>();
  const unlisted = oneStream ? null : unlistedByMergedView(decided, all, rule.rule, rule.order, rule.lookbackMs);
  for (const m of decided) {
    m.hidden = unlisted === null ? m.excluded : unlisted.has(m.key);
    hiddenOf.set(m.key, m.hidden);
    session.flag(m.row, m.hidden, out);
  }
  if (!kind.onQuarters) return;
  // The quarters whose rollups change, per day: a decided row's, and a batch row's where it stands and stood.
  const quarters = new Map<number, Uint8Array>();
  const mark = (ms: number) => {
    const day = Math.floor(ms / DAY_MS);
    let q = quarters.get(day);
    if (!q) quarters.set(day, (q = new Uint8Array(QUARTERS_PER_DAY)));
    q[Math.floor((ms - day * DAY_MS) / QUARTER_MS)] = 1;
  };
  for (const m of decided) mark(m.start);
  for (const s of t.starts) if (inSpans(spans, s)) mark(s);
  const owner = { userId: t.userId, partition: t.partition };
  for (const [day, affected] of [...quarters].sort((a, b) => a[0] - b[0])) {
    const dayRows = await session.load(t.userId, t.partition, day * DAY_MS, (day + 1) * DAY_MS);
    await kind.onQuarters(readStore, owner, utcDayOf(day * DAY_MS), affected, dayRows.values(), hiddenOf, out);
  }
}

/** A row as the merged view sees it (mergedFlags.ts's Member): its interval cut to the rule's longest span. */
function member(kind: MergedKind, r: Doc, start: number, rule: MergeRule): Member {
  let end = start + (kind.lengthMs ?? 0);
  if (kind.endField) {
    const endIso = r[kind.endField] as string;
    // An instant (a heart rate, most samples) ends where it starts: its end is not read again.
    end = endIso === r[kind.startField] ? start : instantMs(endIso);
  }
  const b = boundedInterval(start, end, rule.maxSpanMs);
  return { key: r._id, start: b.start, end: b.end, source: r.source as string, body_worn: r.body_worn === true, provider: r.provider as string, hidden: false, excluded: r.excluded === true, row: r };
}

export const byNumber = (a: number, b: number): number => a - b;

/** Consecutive days (counted from the epoch, sorted) as runs of UTC dates. */
export function dayRuns(days: readonly number[]): string[][] {
  const runs: string[][] = [];
  let prev = NaN;
  for (const d of days) {
    const date = utcDayOf(d * DAY_MS);
    if (d === prev + 1) runs[runs.length - 1]!.push(date);
    else runs.push([date]);
    prev = d;
  }
  return runs;
}
