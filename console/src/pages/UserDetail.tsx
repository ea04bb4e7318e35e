import { useEffect, useState } from 'preact/hooks';
import { QUANTITY_CATALOG } from '../../../src/catalog/quantityCatalog.js';
import { allPages, enc, get } from '../api.js';
import { DateField } from '../components/DateField.js';
import { HealthBadges } from '../components/HealthBadges.js';
import { CoverageHeatmap } from '../components/Heatmap.js';
import { Hypnogram } from '../components/Hypnogram.js';
import { MetricChart } from '../components/MetricChart.js';
import { RouteMap } from '../components/RouteMap.js';
import { Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import { UploadsTable } from '../components/UploadsTable.js';
import { daysBack, daysEnding, isoDay } from '../days.js';
import { defaultNight, sleptSeconds } from '../sleepNights.js';
import { fmtDuration, fmtNum, fmtTime } from '../format.js';
import type { Connection, Coverage, Freshness, RoutePoint, SleepPhase, SleepSession, User, Workout } from '../types.js';
import { browserZone, useAsync } from '../util.js';
import { ScrollBox } from '../components/ScrollBox.js';

const WINDOWS = [7, 14, 30, 90];
const ZONES = [...new Set(['UTC', browserZone(), 'Europe/Berlin', 'America/New_York', 'America/Los_Angeles', 'Asia/Tokyo'])];

/**
 * The latest record of any source (the freshness report's `synced_through`), never later than now:
 * where the window opens when the last 30 days hold nothing.
 */
function latestRecord(freshness: Freshness[]): number | null {
  const times = freshness.map((f) => (f.synced_through ? Date.parse(f.synced_through) : Number.NaN)).filter((t) => !Number.isNaN(t));
  return times.length ? Math.min(Date.now(), Math.max(...times)) : null;
}

export function UserDetailPage({ userId }: { userId: string }) {
  const [span, setSpanState] = useState(() => daysBack(30));
  const { start, end } = span;
  // Until the operator picks a window, the page may move the default one to where the data is.
  const [picked, setPicked] = useState(false);
  const [movedTo, setMovedTo] = useState<string | null>(null);
  const setSpan = (s: { start: string; end: string }) => {
    setPicked(true);
    setMovedTo(null);
    setSpanState(s);
  };
  const [interval, setBucket] = useState<'day' | 'hour'>('day');
  const [tz, setTz] = useState('UTC');
  const [metric, setMetric] = useState<string | null>(null);
  const base = `/v1/users/${enc(userId)}`;

  const user = useAsync(() => get<User>(base), [userId]);
  const health = useAsync(async () => {
    const [f, c] = await Promise.all([get<{ data: Freshness[] }>(`${base}/freshness`), get<{ data: Connection[] }>(`${base}/connections`)]);
    return { freshness: f.data, connections: c.data };
  }, [userId]);
  const coverage = useAsync(() => get<Coverage>(`${base}/coverage`, { start, end }), [userId, start, end]);
  // The default window shows nothing while the user's data is older: open it on the latest record instead, and say so.
  useEffect(() => {
    if (picked || !coverage.data || !health.data) return;
    setPicked(true);
    if (coverage.data.days.some((d) => d.records > 0)) return;
    const latest = latestRecord(health.data.freshness);
    if (latest === null || isoDay(latest) >= start) return;
    setMovedTo(isoDay(latest));
    setSpanState(daysEnding(30, latest));
  }, [picked, coverage.data, health.data]);

  const present = new Set((coverage.data?.days ?? []).flatMap((d) => Object.keys(d.metrics)));
  const metrics = QUANTITY_CATALOG.filter((q) => present.has(q.type));
  useEffect(() => {
    if (metrics.length && (!metric || !metrics.some((m) => m.type === metric))) setMetric(metrics.some((m) => m.type === 'heart_rate') ? 'heart_rate' : metrics[0]!.type);
  }, [metrics.map((m) => m.type).join()]);
  const chosen = metrics.find((m) => m.type === metric);

  return (
    <section aria-labelledby="user-h">
      <p>
        <a href="#/users">← Users</a>
      </p>
      <Loadable state={user} label="the user">
        {(u) => (
          <header class="user-head">
            <h1 id="user-h">{u.external_ref ?? u.id}</h1>
            <p class="muted">
              <span class="mono">{u.id}</span> · {u.status} · created <Time at={u.created_at} /> · <a href={`#/sources/${enc(u.id)}`}>Source order</a> · <a href={`#/pipeline/${enc(u.id)}`}>Pipeline</a>
            </p>
          </header>
        )}
      </Loadable>

      <form class="toolbar" aria-label="Window, interval and time zone" onSubmit={(e) => e.preventDefault()}>
        <DateField label="From" value={start} accept={(d) => (d < end ? null : `before ${end}`)} onDay={(d) => setSpan({ start: d, end })} hint="First day of the window (UTC), YYYY-MM-DD" />
        <DateField label="To (excluded)" value={end} accept={(d) => (d > start ? null : `after ${start}`)} onDay={(d) => setSpan({ start, end: d })} hint="Day after the window (UTC), YYYY-MM-DD" />
        <span role="group" aria-label="Quick windows" class="tabs">
          {WINDOWS.map((d) => (
            <button key={d} type="button" class="secondary small" onClick={() => setSpan(daysBack(d))}>
              {d} days
            </button>
          ))}
        </span>
        <label>
          Interval{' '}
          <select aria-label="Interval" value={interval} onChange={(e) => setBucket(e.currentTarget.value as 'day' | 'hour')}>
            <option value="day">day</option>
            <option value="hour">hour</option>
          </select>
        </label>
        <label>
          Time zone{' '}
          <select aria-label="Time zone" value={tz} onChange={(e) => setTz(e.currentTarget.value)}>
            {ZONES.map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </label>
      </form>
      {movedTo && (
        <p role="status" class="note" data-testid="window-note">
          Nothing in the last 30 days: the window opens on this user's latest data, the 30 days up to {movedTo} (the latest record any source has sent).{' '}
          <button type="button" class="link" onClick={() => setSpan(daysBack(30))}>
            Show the last 30 days
          </button>
        </p>
      )}

      <section aria-labelledby="health-h" class="card">
        <h2 id="health-h">Sources: freshness and connection health</h2>
        <Loadable state={health} label="freshness and connections">
          {(h) => <HealthBadges freshness={h.freshness} connections={h.connections} />}
        </Loadable>
      </section>

      <UploadsTable base={base} tz={tz} />

      <section aria-labelledby="coverage-h" class="card">
        <h2 id="coverage-h">Coverage</h2>
        <Loadable state={coverage} label="coverage">
          {(c) => <CoverageHeatmap coverage={c} start={start} end={end} />}
        </Loadable>
      </section>

      <section aria-labelledby="metric-h" class="card">
        <h2 id="metric-h">Metrics</h2>
        {metrics.length === 0 ? (
          <p class="muted">{coverage.data ? 'No quantity samples in this window.' : 'Waiting for coverage…'}</p>
        ) : (
          <>
            <label>
              Metric{' '}
              <select aria-label="Metric" value={metric ?? ''} onChange={(e) => setMetric(e.currentTarget.value)} data-testid="metric-select">
                {metrics.map((m) => (
                  <option key={m.type} value={m.type}>
                    {m.type}
                  </option>
                ))}
              </select>
            </label>
            {chosen && <MetricChart userId={userId} type={chosen.type} start={start} end={end} interval={interval} tz={tz} aggregation={chosen.aggregation} />}
          </>
        )}
      </section>

      <SleepSection base={base} start={start} end={end} tz={tz} />
      <WorkoutsSection base={base} start={start} end={end} tz={tz} />
    </section>
  );
}

/** A stage's time; null is a night whose source reported no stages (contracts §17), shown as "—", never "0 min". */
function StageDuration({ field, seconds }: { field: string; seconds: number | null }) {
  return (
    <dd data-field={field} data-value={seconds ?? ''} title={seconds === null ? 'Not reported by this source for the night' : undefined}>
      {fmtDuration(seconds)}
    </dd>
  );
}

function SleepSection({ base, start, end, tz }: { base: string; start: string; end: string; tz: string }) {
  const sessions = useAsync(() => allPages<SleepSession>(`${base}/sleep`, { start, end, limit: 1000 }), [base, start, end]);
  const [chosen, setChosen] = useState<number | null>(null);
  const list = sessions.data ?? [];
  const session = list.find((s) => s.id === chosen) ?? defaultNight(list);
  const phases = useAsync(async () => (session ? allPages<SleepPhase>(`${base}/sleep/${session.id}/phases`, { limit: 1000 }) : []), [base, session?.id]);
  return (
    <section aria-labelledby="sleep-h" class="card">
      <h2 id="sleep-h">Sleep</h2>
      <Loadable state={sessions} label="sleep sessions">
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No sleep sessions in this window.</p>
          ) : (
            <>
              <label>
                Night{' '}
                <select aria-label="Night" value={session?.id} onChange={(e) => setChosen(Number(e.currentTarget.value))} data-testid="sleep-select">
                  {all.map((s) => (
                    <option key={s.id} value={s.id}>
                      {fmtTime(s.bedtime_start, tz)}, {fmtDuration(sleptSeconds(s))} ({s.source ?? s.provider})
                    </option>
                  ))}
                </select>
              </label>
              {session && (
                <dl class="counts" data-testid="sleep-summary" data-session-id={session.id}>
                  <div><dt>Asleep</dt><dd data-field="total_sleep_seconds" data-value={session.total_sleep_seconds ?? ''}>{fmtDuration(session.total_sleep_seconds)}</dd></div>
                  <div><dt>Deep</dt><StageDuration field="deep_sleep_seconds" seconds={session.deep_sleep_seconds} /></div>
                  <div><dt>REM</dt><StageDuration field="rem_sleep_seconds" seconds={session.rem_sleep_seconds} /></div>
                  <div><dt>Light</dt><StageDuration field="light_sleep_seconds" seconds={session.light_sleep_seconds} /></div>
                  <div><dt>Awake</dt><StageDuration field="awake_seconds" seconds={session.awake_seconds} /></div>
                  <div><dt>Score</dt><dd>{fmtNum(session.sleep_score)}</dd></div>
                  <div><dt>Source</dt><dd>{session.source ?? session.provider}</dd></div>
                </dl>
              )}
              <Loadable state={phases} label="sleep phases">
                {(p) => <Hypnogram phases={p} tz={tz} />}
              </Loadable>
            </>
          )
        }
      </Loadable>
    </section>
  );
}

function WorkoutsSection({ base, start, end, tz }: { base: string; start: string; end: string; tz: string }) {
  const workouts = useAsync(() => allPages<Workout>(`${base}/workouts`, { start, end, limit: 1000 }), [base, start, end]);
  const [chosen, setChosen] = useState<number | null>(null);
  const list = workouts.data ?? [];
  const workout = list.find((w) => w.id === chosen) ?? list[list.length - 1];
  const route = useAsync(async () => (workout ? allPages<RoutePoint>(`${base}/workouts/${workout.id}/route`, { limit: 1000 }) : []), [base, workout?.id]);
  return (
    <section aria-labelledby="workouts-h" class="card">
      <h2 id="workouts-h">Workouts</h2>
      <Loadable state={workouts} label="workouts">
        {(all) =>
          all.length === 0 ? (
            <p class="muted">No workouts in this window.</p>
          ) : (
            <div class="split">
              <ScrollBox>
                <table data-testid="workouts-table">
                  <caption class="sr-only">Workouts; choose one to see its route</caption>
                  <thead>
                    <tr>
                      <th scope="col">Start ({tz})</th>
                      <th scope="col">Type</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Distance (m)</th>
                      <th scope="col">Energy (kcal)</th>
                      <th scope="col">HR avg / max</th>
                      <th scope="col">Source</th>
                    </tr>
                  </thead>
                  <tbody>
                    {all.map((w) => (
                      <tr key={w.id} data-workout-id={w.id} aria-selected={w.id === workout?.id}>
                        <td>
                          <button type="button" class="link" onClick={() => setChosen(w.id)} aria-pressed={w.id === workout?.id}>
                            <Time at={w.start_date} tz={tz} />
                          </button>
                        </td>
                        <td>{w.type}</td>
                        <td>{fmtDuration(w.duration_s)}</td>
                        <td data-field="distance_m">{fmtNum(w.distance_m)}</td>
                        <td data-field="active_energy_kcal">{fmtNum(w.active_energy_kcal)}</td>
                        <td>
                          {fmtNum(w.avg_heart_rate)} / {fmtNum(w.max_heart_rate)}
                        </td>
                        <td>{w.source ?? w.provider}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
              <div>
                <h3>Route{workout ? ` of ${workout.type} ${fmtTime(workout.start_date, tz)}` : ''}</h3>
                <Loadable state={route} label="the route">
                  {(points) => <RouteMap points={points} />}
                </Loadable>
                {workout?.track && (
                  <dl class="counts">
                    {Object.entries(workout.track)
                      .filter(([, v]) => typeof v === 'number')
                      .map(([k, v]) => (
                        <div key={k}>
                          <dt>{k.replace(/_/g, ' ')}</dt>
                          <dd>{fmtNum(v as number, 2)}</dd>
                        </div>
                      ))}
                  </dl>
                )}
              </div>
            </div>
          )
        }
      </Loadable>
    </section>
  );
}
