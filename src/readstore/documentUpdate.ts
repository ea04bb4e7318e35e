import type { Doc, Scalar, UpdateChange } from './readStore.js';

/**
 * MongoDB update-operator semantics on a plain document, for adapters without a native
 * equivalent. Returns the new document, or null when the document is missing and the change
 * does not upsert.
 */
export function applyUpdate(current: Doc | null, change: UpdateChange): Doc | null {
  if (!current && !change.upsert) return null;
  const doc: Doc = current ? structuredClone(current) : { _id: change.id };
  if (!current && change.setOnInsert) for (const [k, v] of Object.entries(change.setOnInsert)) setPath(doc, k, v);
  if (change.set) for (const [k, v] of Object.entries(change.set)) setPath(doc, k, v);
  if (change.unset) for (const k of change.unset) unsetPath(doc, k);
  if (change.inc)
    for (const [k, v] of Object.entries(change.inc)) {
      const old = getPath(doc, k);
      setPath(doc, k, (typeof old === 'number' ? old : 0) + v);
    }
  if (change.min)
    for (const [k, v] of Object.entries(change.min)) {
      const old = getPath(doc, k) as Scalar | undefined;
      if (old === undefined || old === null || compareScalars(v, old) < 0) setPath(doc, k, v);
    }
  if (change.max)
    for (const [k, v] of Object.entries(change.max)) {
      const old = getPath(doc, k) as Scalar | undefined;
      if (old === undefined || old === null || compareScalars(v, old) > 0) setPath(doc, k, v);
    }
  return doc;
}

/** Numbers before strings before booleans, as MongoDB's BSON order has it for these types. */
export function compareScalars(a: Scalar, b: Scalar): number {
  const rank = (x: Scalar) => (x === null ? 0 : typeof x === 'number' ? 1 : typeof x === 'string' ? 2 : 3);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (a === b) return 0;
  return (a as number | string | boolean) < (b as number | string | boolean) ? -1 : 1;
}

export function getPath(doc: Record<string, unknown>, path: string): unknown {
  let cur: unknown = doc;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur = doc;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (next === null || typeof next !== 'object') cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]!] = value;
}

function unsetPath(doc: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  let cur: unknown = doc;
  for (const part of parts.slice(0, -1)) {
    if (cur === null || typeof cur !== 'object') return;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur && typeof cur === 'object') delete (cur as Record<string, unknown>)[parts[parts.length - 1]!];
}
