import { useEffect, useRef, useState } from 'preact/hooks';
import { fmtDuration, fmtTime } from '../format.js';
import type { SleepPhase } from '../types.js';
import { timeTicks } from './isoTimeAxis.js';
import { TableDetails } from './TableDetails.js';
import { Time } from './Time.js';

/** Rows of the hypnogram, top to bottom: the usual order of sleep depth. Other phase names get rows below. */
const LEVELS = ['awake', 'rem', 'light', 'deep'];
const COLOURS: Record<string, string> = { awake: '#c62828', rem: '#7b1fa2', light: '#1e88e5', deep: '#0d47a1' };

/** The width an element has on the screen, followed as it changes. */
function useWidth(fallback: number) {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver(() => setWidth(el.clientWidth || fallback));
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return { ref, width };
}

/**
 * A night's phases as a step chart over time (SVG), with the phases as a table beside it. The
 * drawing is as wide as its box in CSS pixels (not a fixed picture scaled down), so its labels keep
 * their size on a phone; time ticks (every 5 minutes up to every 6 hours) leave room between labels.
 */
export function Hypnogram({ phases, tz }: { phases: SleepPhase[]; tz: string }) {
  const { ref, width } = useWidth(800);
  if (phases.length === 0)
    return (
      <div ref={ref}>
        <p class="muted">This session has no phases.</p>
      </div>
    );
  const levels = [...LEVELS, ...[...new Set(phases.map((p) => p.phase))].filter((p) => !LEVELS.includes(p)).sort()];
  const t0 = Math.min(...phases.map((p) => Date.parse(p.start_date)));
  const t1 = Math.max(...phases.map((p) => Date.parse(p.end_date)));
  const W = Math.max(260, Math.min(900, width));
  const rowH = 34;
  const left = 58;
  const H = levels.length * rowH + 24;
  const x = (t: number) => left + ((t - t0) / Math.max(1, t1 - t0)) * (W - left - 10);
  const totals = new Map<string, number>();
  for (const p of phases) totals.set(p.phase, (totals.get(p.phase) ?? 0) + p.duration_s);
  const ticks = timeTicks(t0, t1, (W - left - 10) / Math.max(1, (t1 - t0) / 60_000), tz).filter((t) => x(t) <= W - 24);
  const summary = levels.filter((l) => totals.has(l)).map((l) => `${l} ${fmtDuration(totals.get(l)!)}`).join(', ');
  return (
    <div data-testid="hypnogram" data-phases={phases.length} ref={ref}>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} class="hypnogram" role="img" aria-label={`Hypnogram from ${fmtTime(phases[0]!.start_date, tz)} to ${fmtTime(new Date(t1).toISOString(), tz)}: ${summary}`}>
        {levels.map((l, i) => (
          <g key={l}>
            <text x={4} y={i * rowH + rowH / 2 + 4} class="axis-label">
              {l}
            </text>
            <line x1={left} x2={W - 10} y1={i * rowH + rowH / 2} y2={i * rowH + rowH / 2} class="grid" />
          </g>
        ))}
        {ticks.map((t) => (
          <g key={t} data-tick={fmtTime(t, tz).slice(-5)}>
            <line x1={x(t)} x2={x(t)} y1={0} y2={levels.length * rowH + 4} class="grid tick" />
            <text x={x(t)} y={H - 6} class="axis-label" text-anchor="middle">
              {fmtTime(t, tz).slice(-5)}
            </text>
          </g>
        ))}
        {phases.map((p) => {
          const i = levels.indexOf(p.phase);
          return (
            <rect
              key={p.id}
              data-phase={p.phase}
              x={x(Date.parse(p.start_date))}
              y={i * rowH + 6}
              width={Math.max(1, x(Date.parse(p.end_date)) - x(Date.parse(p.start_date)))}
              height={rowH - 12}
              fill={COLOURS[p.phase] ?? '#546e7a'}
            >
              <title>{`${p.phase}: ${fmtTime(p.start_date, tz)} – ${fmtTime(p.end_date, tz)} (${fmtDuration(p.duration_s)})`}</title>
            </rect>
          );
        })}
      </svg>
      <TableDetails summary={`Phases table (${phases.length})`} caption="Sleep phases" testid="phases-table">
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col">Start ({tz})</th>
            <th scope="col">End</th>
            <th scope="col">Duration (s)</th>
          </tr>
        </thead>
        <tbody>
          {phases.map((p) => (
            <tr key={p.id} data-phase-id={p.id}>
              <td>{p.phase}</td>
              <td><Time at={p.start_date} tz={tz} /></td>
              <td><Time at={p.end_date} tz={tz} /></td>
              <td data-field="duration_s">{p.duration_s}</td>
            </tr>
          ))}
        </tbody>
      </TableDetails>
    </div>
  );
}
