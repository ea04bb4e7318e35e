import type { Filter } from '../../src/readstore/readStore.js';

/** A time window in epoch milliseconds: start inclusive, end exclusive (spec "Conventions" 2). */
export type Window = { start: number | null; end: number | null };

export function windowFilter(field: string, w: Window): Filter {
  if (w.start === null && w.end === null) return {};
  return {
    [field]: {
      ...(w.start !== null ? { $gte: new Date(w.start).toISOString() } : {}),
      ...(w.end !== null ? { $lt: new Date(w.end).toISOString() } : {}),
    },
  };
}

/** For fields holding calendar dates (YYYY-MM-DD), compared as dates. */
export function dateWindowFilter(field: string, w: Window): Filter {
  if (w.start === null && w.end === null) return {};
  return {
    [field]: {
      ...(w.start !== null ? { $gte: new Date(w.start).toISOString().slice(0, 10) } : {}),
      ...(w.end !== null ? { $lt: new Date(w.end).toISOString().slice(0, 10) } : {}),
    },
  };
}
