/**
 * The start of a line as sent (a rejected record, an error, a receiver's answer). A long one shows
 * its first words and opens in place: a table of them stays a table, not a wall of wrapped JSON.
 */
export function Excerpt({ text, keep = 90 }: { text: string | null | undefined; keep?: number }) {
  if (!text) return null;
  if (text.length <= keep + 12) return <>{text}</>;
  return (
    <details class="excerpt-more">
      <summary>{text.slice(0, keep)}…</summary>
      <span>{text}</span>
    </details>
  );
}
