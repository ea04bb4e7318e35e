import type { ReadStore } from '../../src/readstore/readStore.js';
import type { NutritionDoc } from '../../projections/records/nutritionProjection.js';
import { findPage, type PageRequest } from '../shared/page.js';
import { windowFilter, type Window } from './window.js';

export type ListNutrition = { userId: string; window: Window };

/** Nutrition logs of every source, oldest first (start_date, then id); no merged view (spec "Reads"). */
export function listNutrition(readStore: ReadStore, q: ListNutrition, page: PageRequest) {
  return findPage<NutritionDoc>(
    readStore,
    'nutrition',
    {
      filter: { user_id: q.userId, ...windowFilter('start_date', q.window) },
      sort: [
        ['start_date', 1],
        ['id', 1],
      ],
    },
    page,
  );
}
