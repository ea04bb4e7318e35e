import type { Filter } from '../../src/readstore/readStore.js';
import type { Page } from '../shared/page.js';

export type View = 'merged' | 'all';

/**
 * The merged view is state: the record projections flag every record a better ranked source's
 * matching record hides, under the user's current order (projections/records/mergedView/). A
 * list in either view is then one index range scan; the merged view skips the flagged rows.
 */
export const mergedFilter = (view: View): Filter => (view === 'merged' ? { hidden: { $ne: true } } : {});

/** Every listed record says whether the merged view lists it (`is_primary_source`). */
export const withPrimary = <T extends object>(page: Page<T>): Page<T & { primary: boolean }> => ({
  items: page.items.map((d) => Object.assign(d, { primary: (d as { hidden?: unknown }).hidden !== true })),
  next: page.next,
});
