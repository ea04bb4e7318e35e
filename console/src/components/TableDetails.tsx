import type { ComponentChildren } from 'preact';
import { ScrollBox } from './ScrollBox.js';

/** A chart's or list's numbers as a table, folded away under a summary line (a screen reader still finds it by its caption). */
export function TableDetails({ summary, caption, testid, children }: { summary: string; caption: string; testid?: string; children: ComponentChildren }) {
  return (
    <details>
      <summary>{summary}</summary>
      <ScrollBox>
        <table data-testid={testid}>
          <caption class="sr-only">{caption}</caption>
          {children}
        </table>
      </ScrollBox>
    </details>
  );
}
