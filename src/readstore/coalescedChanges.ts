import type { Change, UpdateChange } from './readStore.js';

/**
 * A batch's changes with each run of plain `set` updates of one document folded into the change
 * before it, so the document is written once: a one-line upload's job row is updated by its
 * success and its `data.written`, appended together, in one batch of `etl_jobs` (issue 37), and
 * each statement moved the row's index entries again. Only where the result is the same as
 * applying them one after another:
 *
 * - the later change is an update with top-level `set` fields only (no `setOnInsert`, `unset`,
 *   counters or upsert) of the same collection and id as the change right before it;
 * - that earlier change is a `put` (the document exists afterwards: the fields are set on the
 *   document put) or an update of the same plain kind (a missing document stays missing either way).
 *
 * A field set to `undefined` sets nothing, as when the update is applied alone. Anything else
 * (a deletion, another document's change) ends the run. The changes given are not modified.
 */
export function coalesceChanges(changes: readonly Change[]): readonly Change[] {
  let out: Change[] | null = null;
  for (let i = 1; i < changes.length; i++) {
    const later = changes[i]!;
    const earlier = out ? out[out.length - 1]! : changes[i - 1]!;
    const merged = isPlainSet(later) ? fold(earlier, later) : null;
    if (merged) {
      out ??= changes.slice(0, i);
      out[out.length - 1] = merged;
    } else out?.push(later);
  }
  return out ?? changes;
}

function fold(earlier: Change, later: UpdateChange & { set: Record<string, unknown> }): Change | null {
  if (earlier.collection !== later.collection) return null;
  if (earlier.op === 'put') {
    if (earlier.doc._id !== later.id) return null;
    return { ...earlier, doc: { ...earlier.doc, ...defined(later.set) } };
  }
  if (earlier.op === 'update' && earlier.id === later.id && isPlainSet(earlier)) {
    return { ...earlier, set: { ...earlier.set, ...defined(later.set) } };
  }
  return null;
}

function isPlainSet(c: Change): c is UpdateChange & { set: Record<string, unknown> } {
  if (c.op !== 'update' || !c.set || c.upsert || c.setOnInsert || c.unset?.length || c.inc || c.min || c.max) return false;
  // A dotted path sets inside a value another field of the run may replace: order would matter.
  // An `_id` set would move a folded put to another row.
  for (const k in c.set) if (k.includes('.') || k === '_id') return false;
  return true;
}

function defined(set: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in set) if (set[k] !== undefined) out[k] = set[k];
  return out;
}
