import { useMemo } from 'preact/hooks';
import uPlot from 'uplot';
import { enc, get } from '../api.js';
import { fmtNum, fmtTime, plural } from '../format.js';
import type { Stats } from '../types.js';
import { useAsync } from '../util.js';
import { Loadable } from './Status.js';
import { TableDetails } from './TableDetails.js';
import { Time } from './Time.js';
import { UPlotChart } from './UPlotChart.js';
import { buildModel, figure, lineData, seriesKey, type Aggregation, type Interval } from './chartModel.js';
import { isoTimeValues } from './isoTimeAxis.js';

const PALETTE = ['#b3261e', '#1565c0', '#2e7d32', '#6a1b9a', '#ef6c00', '#00838f', '#5d4037'];
const MERGED = '#111';

export type ChartQuery = { userId: string; type: string; start: string; end: string; interval: Interval; tz: string; aggregation: Aggregation };

export function MetricChart(q: ChartQuery) {
  const stats = useAsync(async () => {
    const path = `/v1/users/${enc(q.userId)}/samples/stats`;
    const base = { type: q.type, start: q.start, end: q.end, interval: q.interval, tz: q.tz };
    const [merged, all] = await Promise.all([get<Stats>(path, { ...base, view: 'merged' }), get<Stats>(path, { ...base, view: 'all' })]);
    // The moment the answer came: the bucket holding it is still filling.
    return { merged, all, now: Date.now() };
  }, [q.userId, q.type, q.start, q.end, q.interval, q.tz]);
  return (
    <Loadable state={stats} label={`${q.type} statistics`}>
      {({ merged, all, now }) => <ChartBody q={q} merged={merged} all={all} now={now} />}
    </Loadable>
  );
}

function ChartBody({ q, merged, all, now }: { q: ChartQuery; merged: Stats; all: Stats; now: number }) {
  const model = useMemo(() => buildModel(merged, all, q.aggregation, now), [merged, all, q.aggregation, now]);
  const partial = model.rows.find((r) => r.partial);

  const { options, data } = useMemo(() => {
    const line = lineData(model, q.aggregation, q.interval);
    const partialAt = line.rowAt[model.rows.findIndex((r) => r.partial)];
    const colours = [MERGED, ...model.sources.map((_, i) => PALETTE[i % PALETTE.length]!)];
    const names = ['merged', ...model.sources];
    // The hover legend reads a line's value at the cursor; at the bucket still filling that value lives in the dotted companion line.
    const valueOf = (k: number) => (_u: uPlot, v: number | null, _s: number, idx: number | null) =>
      idx !== null && idx === partialAt ? `${fmtNum(line.partialLines![k]![idx])} (so far)` : v === null ? '—' : fmtNum(v);
    const series: uPlot.Series[] = [
      { value: (_u, v) => (v === null ? '—' : fmtTime(v * 1000, q.tz)) },
      { label: 'merged', stroke: MERGED, width: 3, spanGaps: false, value: valueOf(0), points: { show: model.rows.length < 60, fill: MERGED } },
      ...model.sources.map((s, i) => ({ label: s, stroke: colours[i + 1], width: 1.5, dash: [6, 4], spanGaps: false, value: valueOf(i + 1), points: { show: model.rows.length < 60, size: 5, fill: colours[i + 1] } })),
      // The bucket still filling: hollow point, dotted from the last complete bucket; hidden from the legend (the note under the chart says it).
      ...(line.partialLines ?? []).map((_, k) => ({
        label: `${names[k]} (so far)`,
        class: 'partial-series',
        stroke: colours[k],
        width: k === 0 ? 2 : 1.5,
        dash: [2, 4],
        spanGaps: false,
        points: { show: true, size: k === 0 ? 10 : 7, width: 2, fill: '#fff', filter: () => (partialAt === undefined ? null : [partialAt]) },
      })),
    ];
    const options: Omit<uPlot.Options, 'width'> = {
      height: 260,
      // Room on the right for the last tick's date, which is centred on its tick.
      padding: [null, 36, null, null],
      series,
      tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), q.tz),
      // The y axis is labelled with the unit alone and sized to its widest value: the metric's name with
      // its figure and unit did not fit a 260 px axis for long names (issue 36: a clipped label), and
      // the heading above the chart says it in full.
      axes: [{ values: isoTimeValues(q.tz), space: 80 }, { label: model.unit, size: yAxisSize }],
      // The axis spans the window the API widened to whole intervals, however few buckets hold data.
      scales: { x: { time: true, range: [Date.parse(all.start) / 1000, Date.parse(all.end) / 1000] } },
      legend: { live: true },
      // Under each bucket, a band in the colour of the source the merged view shows there (paler while the bucket fills).
      hooks: {
        draw: [
          (u: uPlot) => {
            const step = q.interval === 'hour' ? 3600 : 86_400;
            const band = 6 * devicePixelRatio;
            const bottom = u.bbox.top + u.bbox.height;
            model.rows.forEach((r) => {
              const top = r.merged[0];
              const k = top ? model.sources.indexOf(seriesKey(top)) : -1;
              if (k < 0) return;
              const x = Date.parse(r.start) / 1000;
              const x0 = u.valToPos(x, 'x', true);
              const x1 = u.valToPos(x + step, 'x', true);
              u.ctx.globalAlpha = r.partial ? 0.35 : 1;
              u.ctx.fillStyle = PALETTE[k % PALETTE.length]!;
              u.ctx.fillRect(x0, bottom - band, Math.max(1, x1 - x0 - devicePixelRatio), band);
            });
            u.ctx.globalAlpha = 1;
          },
        ],
      },
    };
    return { options, data: [line.xs, ...line.lines, ...(line.partialLines ?? [])] as uPlot.AlignedData };
  }, [model, all.start, all.end, q.tz, q.type, q.aggregation, q.interval]);

  if (model.rows.length === 0) return <p class="muted">No {q.type} in this window.</p>;
  const figureName = q.aggregation === 'sum' ? 'sum' : 'avg';
  const bucketName = q.interval === 'hour' ? 'hour' : 'day';
  return (
    <div data-testid="metric-chart" data-type={q.type} data-interval={q.interval} data-tz={q.tz} data-partial-start={partial?.start ?? ''} data-gaps={JSON.stringify(model.gaps)}>
      {(merged.truncated || all.truncated) && <p class="warn-text">The statistics are truncated: they hold the earliest 50,000 buckets.</p>}
      <p class="muted" data-testid="winners">
        The merged view shows (the band along the bottom of the chart, in the source's colour):{' '}
        {[...model.wins.entries()].map(([s, n], i) => (
          <span key={s}>
            {i ? ', ' : ''}
            <strong>{s}</strong> in {plural(n, 'bucket')}
          </span>
        ))}
      </p>
      <p class="chart-title" data-testid="chart-title">
        {q.type}: {q.aggregation === 'sum' ? 'sum' : 'mean'} per {bucketName} ({model.unit}, {q.tz})
      </p>
      <UPlotChart options={options} data={data} label={`${q.type} per ${q.interval} in ${q.tz}: merged view and every source; the table below holds the numbers`} />
      <ul class="chart-notes">
        {model.gaps.length > 0 && (
          <li data-testid="gaps-note">
            The lines break where a {bucketName} has no data ({plural(model.gaps.length, 'gap')}); nothing is drawn across a gap.
          </li>
        )}
        {partial && (
          <li data-testid="partial-note">
            <span class="partial-key" aria-hidden="true" /> The current {bucketName}, {partialLabel(partial.start, q.interval, q.tz)} ({q.tz}), is still filling: sources report at different times, so its figures are partial. It is drawn hollow, joined by a dotted line, and is not part of the solid lines.
          </li>
        )}
      </ul>
      <TableDetails
        summary={`Data table (${plural(model.rows.length, 'bucket')})`}
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
            <tr key={r.start} data-start={r.start} data-partial={r.partial ? 'true' : undefined}>
              <td>
                <Time at={r.start} tz={q.tz} />
                {r.partial && <span class="muted"> (partial)</span>}
              </td>
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

/** Room for the y axis's values: the widest tick label at the axis font (under 7.5 px a character), the tick and its gap. */
const yAxisSize = (_u: uPlot, values: string[] | null) => Math.ceil(Math.max(3, ...(values ?? []).map((v) => String(v).length)) * 7.5) + 20;

/** "2026-11-26" for a day, "2026-11-26 14:00" for an hour. */
const partialLabel = (start: string, interval: Interval, tz: string) => (interval === 'hour' ? fmtTime(start, tz) : start.slice(0, 10));
