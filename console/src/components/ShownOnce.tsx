/** A secret the service shows once: visible until the operator leaves the page, never stored. */
export function ShownOnce({ label, secret, note }: { label: string; secret: string; note?: string }) {
  return (
    <div role="status" class="once">
      <p>
        {label} (shown this once; copy it now{note ? `; ${note}` : ''}):
      </p>
      <input readOnly value={secret} aria-label={label} class="mono" onFocus={(e) => e.currentTarget.select()} />
    </div>
  );
}
