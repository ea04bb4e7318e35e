import { useEffect, useState } from 'preact/hooks';
import { isIsoDay } from '../days.js';

/**
 * A day typed as YYYY-MM-DD. Not `<input type=date>`: that one shows the browser's locale
 * (MM/DD/YYYY in one browser, DD.MM.YYYY in the next), and the console writes every date in ISO
 * 8601. The value is taken as soon as it is a real day that `accept` allows; until then the field
 * says what it expects.
 */
export function DateField({ label, value, onDay, accept = () => null, hint }: { label: string; value: string; onDay: (day: string) => void; accept?: (day: string) => string | null; hint?: string }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const problem = text === value ? null : !isIsoDay(text) ? 'a day as YYYY-MM-DD' : accept(text);
  const id = `date-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <span class="date-field">
      <label>
        {label}{' '}
        <input
          type="text"
          inputMode="numeric"
          pattern="\d{4}-\d{2}-\d{2}"
          placeholder="YYYY-MM-DD"
          size={10}
          maxLength={10}
          autoComplete="off"
          spellcheck={false}
          value={text}
          aria-invalid={problem ? true : undefined}
          aria-describedby={problem ? id : undefined}
          title={hint ?? 'YYYY-MM-DD'}
          onInput={(e) => {
            const v = e.currentTarget.value.trim();
            setText(v);
            if (v !== value && isIsoDay(v) && !accept(v)) onDay(v);
          }}
        />
      </label>
      {problem && (
        <span id={id} class="error-text field-note">
          {problem}
        </span>
      )}
    </span>
  );
}
