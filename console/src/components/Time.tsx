import { fmtTime } from '../format.js';

/** A time in the page: YYYY-MM-DD HH:MM in the zone, kept on one line (a narrow cell would break it at its hyphens). */
export function Time({ at, tz = 'UTC' }: { at: string | null | undefined; tz?: string }) {
  if (!at) return <>—</>;
  return (
    <time class="t" dateTime={at}>
      {fmtTime(at, tz)}
    </time>
  );
}
