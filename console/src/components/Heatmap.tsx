import type { Coverage } from '../types.js';
import { ScrollBox } from './ScrollBox.js';
import { plural } from '../format.js';

function datesOf(start: string, end: string): string[] {
  const out: string[] = [];
  for (let t = Date.parse(`${start}T00:00:00Z`); t < Date.parse(`${end}T00:00:00Z`); t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** Runs of consecutive dates in one month: the header row above the days (YYYY-MM, spanning its days). */
function monthsOf(dates: string[]): { month: string; days: number }[] {
  const out: { month: string; days: number }[] = [];
  for (const d of dates) {
    const last = out[out.length - 1];
    if (last?.month === d.slice(0, 7)) last.days += 1;
    else out.push({ month: d.slice(0, 7), days: 1 });
  }
  return out;
}

/**
 * Providers × days, each cell the day's record count from the coverage report (a table, so a
 * screen reader reads the same numbers the colours show). Darker is more records, scaled to the
 * busiest day on the page. Days are UTC days (the report's `date`), headed by their day of the month
 * under a row of months (YYYY-MM).
 */
export function CoverageHeatmap({ coverage, start, end }: { coverage: Coverage; start: string; end: string }) {
  const dates = datesOf(start, end);
  const providers = [...new Set(coverage.days.map((d) => d.provider))].sort();
  const byKey = new Map(coverage.days.map((d) => [`${d.provider}|${d.date}`, d]));
  const max = Math.max(1, ...coverage.days.map((d) => d.records));
  return (
    <div>
      <dl class="counts" data-testid="coverage-counts">
        <div>
          <dt>Pending jobs</dt>
          <dd data-field="pending_jobs">{coverage.pending_jobs}</dd>
        </div>
        <div>
          <dt>Parked jobs</dt>
          <dd data-field="parked_jobs">{coverage.parked_jobs}</dd>
        </div>
        <div>
          <dt>Rejected records</dt>
          <dd data-field="rejected_records">{coverage.rejected_records}</dd>
        </div>
      </dl>
      {coverage.truncated && <p class="warn-text">The report is truncated: it holds the earliest 10,000 provider days.</p>}
      {providers.length === 0 ? (
        <p class="muted">No records in this window.</p>
      ) : (
        <ScrollBox>
          <table class="heatmap" data-testid="coverage-heatmap">
            <caption class="sr-only">Records per provider and day</caption>
            <thead>
              <tr class="months" data-testid="heatmap-months">
                <td />
                {monthsOf(dates).map((m) => (
                  <th scope="colgroup" key={m.month} colSpan={m.days} data-month={m.month}>
                    {m.month}
                  </th>
                ))}
              </tr>
              <tr>
                <th scope="col">Provider</th>
                {dates.map((d) => (
                  <th scope="col" key={d} title={d}>
                    <span aria-hidden="true">{d.slice(8)}</span>
                    <span class="sr-only">{d}</span>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {providers.map((p) => (
                <tr key={p}>
                  <th scope="row">{p}</th>
                  {dates.map((date) => {
                    const day = byKey.get(`${p}|${date}`);
                    const n = day?.records ?? 0;
                    const level = n === 0 ? 0 : Math.min(5, 1 + Math.floor((n / max) * 4.999));
                    const metrics = day ? Object.entries(day.metrics).map(([k, v]) => `${k}: ${v}`).join(', ') : 'no records';
                    return (
                      <td key={date} class={`heat l${level}`} data-provider={p} data-date={date} data-records={n} title={`${p} ${date}: ${plural(n, 'record')} (${metrics})`}>
                        {n}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </div>
  );
}
