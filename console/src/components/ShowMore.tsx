import { useState } from 'preact/hooks';

/**
 * The first `limit` items of a long list, with a button for the rest: a page of long tables stays
 * a page a phone can scroll, and nothing is out of reach.
 */
export function useShowMore<T>(items: T[], limit: number) {
  const [all, setAll] = useState(false);
  const shown = all ? items : items.slice(0, limit);
  const hidden = items.length - shown.length;
  const toggle =
    items.length > limit ? (
      <button type="button" class="small secondary show-more" aria-expanded={all} onClick={() => setAll(!all)}>
        {all ? `Show the first ${limit}` : `Show all ${items.length} (${hidden} more)`}
      </button>
    ) : null;
  return { shown, toggle };
}
