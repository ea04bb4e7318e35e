import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { enc, get } from '../api.js';
import type { Bucket, Stats } from '../types.js';
import { fmtNum, fmtTime, useAsync } from '../util.js';
import { Loadable } from './Status.js';
import { TableDetails } from './TableDetails.js';
import { UPlotChart } from './UPlotChart.js';

const PALETTE = ['#b3261e', '#1565c0', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037'];

export type ChartQuery = { userId: string; type: string; start: string; end: string; interval: 'day' | 'hour'; tz: string; aggregation: 'sum' | 'avg' };

/** A bucket's figure: counts add up (steps, energy), readings average (heart rate), as the catalog says. */
const figure = (b: Bucket, aggregation: 'sum' | 'avg') => (aggregation === 'sum' ? b.sum : b.avg);

/**
 * The merged view of one bucket. Usually one row (one source wins the whole bucket); when the
 * winner changes inside a bucket the merged answer has a row per source, combined here the way the
 * metric combines (sum, or the count-weighted mean). The table lists the rows as the API answers.
 */
function combined(rows: Bucket[], aggregation: 'sum' | 'avg'): number {
  const sum = rows.reduce((s, b) => s + b.sum, 0);
  if (aggregation === 'sum') return sum;
  const count = rows.reduce((s, b) => s + b.count, 0);
  return count ? sum / count : Number.NaN;
}

const seriesKey = (b: Bucket) => (b.source && b.source !== b.provider ? `${b.provider} · ${b.source}` : b.provider);

export function MetricChart(q: ChartQuery) {
  const stats = useAsync(async () => {
    const path = `/v1/users/${enc(q.userId)}/samples/stats`;
    const base = { type: q.type, start: q.start, end: q.end, interval: q.interval, tz: q.tz };
    const [merged, all] = await Promise.all([get<Stats>(path, { ...base, view: 'merged' }), get<Stats>(path, { ...base, view: 'all' })]);
    return { merged, all };
  }, [q.userId, q.type, q.start, q.end, q.interval, q.tz]);
  return (
    <Loadable state={stats} label={`${q.type} statistics`}>
      {({ merged, all }) => <ChartBody q={q} merged={merged} all={all} />}
    </Loadable>
  );
}

function ChartBody({ q, merged, all }: { q: ChartQuery; merged: Stats; all: Stats }) {
  const model = useMemo(() => {
    const starts = [...new Set([...merged.buckets, ...all.buckets].map((b) => b.start))].sort((a, b) => Date.parse(a) - Date.parse(b));
    const sources = [...new Set(all.buckets.map(seriesKey))].sort();
    const mergedBy = new Map<string, Bucket[]>();
    for (const b of merged.buckets) mergedBy.set(b.start, [...(mergedBy.get(b.start) ?? []), b]);
    const allBy = new Map(all.buckets.map((b) => [`${b.start}|${seriesKey(b)}`, b]));
    const rows = starts.map((start) => {
      const m = (mergedBy.get(start) ?? []).slice().sort((a, b) => b.count - a.count);
      return { start, merged: m, mergedValue: m.length ? combined(m, q.aggregation) : null, bySource: sources.map((s) => allBy.get(`${start}|${s}`) ?? null) };
    });
    const wins = new Map<string, number>();
    for (const r of rows) for (const b of r.merged) wins.set(seriesKey(b), (wins.get(seriesKey(b)) ?? 0) + 1);
    return { starts, sources, rows, wins, unit: all.buckets[0]?.unit ?? merged.buckets[0]?.unit ?? '' };
  }, [merged, all, q.aggregation]);

  const { options, data } = useMemo(() => {
    const xs = model.starts.map((s) => Date.parse(s) / 1000);
    const ys: (number | null)[][] = [model.rows.map((r) => r.mergedValue)];
    model.sources.forEach((_, i) => ys.push(model.rows.map((r) => (r.bySource[i] ? figure(r.bySource[i]!, q.aggregation) : null))));
    const series: uPlot.Series[] = [
      {},
      { label: 'merged', stroke: '#111', width: 3, points: { show: model.starts.length < 60 } },
      ...model.sources.map((s, i) => ({ label: s, stroke: PALETTE[i % PALETTE.length], width: 1.5, dash: [6, 4], points: { show: false } })),
    ];
    const options: Omit<uPlot.Options, 'width'> = {
      height: 260,
      series,
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), q.tz),
      axes: [{}, { label: `${q.type} (${q.aggregation === 'sum' ? 'sum' : 'mean'}, ${model.unit})`, size: 60 }],
      // The axis spans the window the API widened to whole intervals, however few buckets hold data.
      scales: { x: { time: true, range: [Date.parse(all.start) / 1000, Date.parse(all.end) / 1000] } },
      legend: { live: true },
      // Under each bucket, a band in the colour of the source the merged view shows there.
      hooks: {
        draw: [
          (u: uPlot) => {
            const step = q.interval === 'hour' ? 3600 : 86_400;
            const band = 6 * devicePixelRatio;
            const bottom = u.bbox.top + u.bbox.height;
            model.rows.forEach((r, i) => {
              const top = r.merged[0];
              const k = top ? model.sources.indexOf(seriesKey(top)) : -1;
              if (k < 0) return;
              const x0 = u.valToPos(xs[i]!, 'x', true);
              const x1 = u.valToPos(xs[i]! + step, 'x', true);
              u.ctx.fillStyle = PALETTE[k % PALETTE.length]!;
              u.ctx.fillRect(x0, bottom - band, Math.max(1, x1 - x0 - devicePixelRatio), band);
            });
          },
        ],
      },
    };
    return { options, data: [xs, ...ys] as uPlot.AlignedData };
  }, [model, all.start, all.end, q.tz, q.type, q.aggregation]);

  if (model.starts.length === 0) return <p class="muted">No {q.type} in this window.</p>;
  const figureName = q.aggregation === 'sum' ? 'sum' : 'avg';
  return (
    <div data-testid="metric-chart" data-type={q.type} data-interval={q.interval} data-tz={q.tz}>
      {(merged.truncated || all.truncated) && <p class="warn-text">The statistics are truncated: they hold the earliest 50,000 buckets.</p>}
      <p class="muted" data-testid="winners">
        The merged view shows (the band along the bottom of the chart, in the source's colour):{' '}
        {[...model.wins.entries()].map(([s, n], i) => (
          <span key={s}>
            {i ? ', ' : ''}
            <strong>{s}</strong> in {n} {n === 1 ? 'bucket' : 'buckets'}
          </span>
        ))}
      </p>
      <UPlotChart options={options} data={data} label={`${q.type} per ${q.interval} in ${q.tz}: merged view and every source; the table below holds the numbers`} />
      <TableDetails
        summary={`Data table (${model.rows.length} buckets)`}
        caption={`${q.type} per ${q.interval}: the merged view's ${figureName} and winning source, and each source's ${figureName}`}
        testid="stats-table"
      >
        <thead>
          <tr>
            <th scope="col">Bucket start ({q.tz})</th>
            <th scope="col">Winning source</th>
            <th scope="col">Merged {figureName}</th>
            <th scope="col">Merged count</th>
            {model.sources.map((s) => (
              <th scope="col" key={s}>
                {s} {figureName}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {model.rows.map((r) => (
            <tr key={r.start} data-start={r.start}>
              <td>{fmtTime(r.start, q.tz)}</td>
              <td data-field="winner">{r.merged.map(seriesKey).join(' + ') || '—'}</td>
              <td data-field="merged" data-value={r.mergedValue ?? ''}>
                {fmtNum(r.mergedValue)}
              </td>
              <td data-field="merged-count" data-value={r.merged.reduce((s, b) => s + b.count, 0)}>
                {r.merged.reduce((s, b) => s + b.count, 0)}
              </td>
              {r.bySource.map((b, i) => (
                <td key={model.sources[i]} data-source={model.sources[i]} data-value={b ? figure(b, q.aggregation) : ''} data-count={b?.count ?? ''}>
                  {b ? fmtNum(figure(b, q.aggregation)) : '—'}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </TableDetails>
    </div>
  );
}
