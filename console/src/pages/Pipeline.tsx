import { useState } from 'preact/hooks';
import { api, ApiError, allPages, enc, get, type Page } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { Excerpt } from '../components/Excerpt.js';
import { useShowMore } from '../components/ShowMore.js';
import { Badge, Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import { UserPicker } from '../components/UserPicker.js';
import { syncAttempts } from '../syncAttempts.js';
import type { Connection, EtlJob, RejectedRecord, SyncRun } from '../types.js';
import { useAsync } from '../util.js';
import { ScrollBox } from '../components/ScrollBox.js';

const STATUSES = ['parked', 'pending', 'running'] as const;

/** Newest rejection first (one upload's lines share its time), then by provider, then by line or position, ascending and numeric (line 6 before line 21). */
const byLine = (a: RejectedRecord, b: RejectedRecord) =>
  b.rejected_at.localeCompare(a.rejected_at) || a.provider.localeCompare(b.provider) || a.location.localeCompare(b.location, 'en', { numeric: true });

export function PipelinePage({ userId }: { userId: string | undefined }) {
  return (
    <section aria-labelledby="pipeline-h">
      <h1 id="pipeline-h">Pipeline</h1>
      <EtlJobs />
      <section aria-labelledby="per-user-h" class="card">
        <h2 id="per-user-h">Per user: rejected records and sync runs</h2>
        <UserPicker section="pipeline" userId={userId} />
        {userId ? (
          <>
            <Rejected key={`r${userId}`} userId={userId} />
            <SyncRuns key={`s${userId}`} userId={userId} />
          </>
        ) : (
          <p class="muted">Choose a user.</p>
        )}
      </section>
    </section>
  );
}

function EtlJobs() {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>('parked');
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const jobs = useAsync(() => get<Page<EtlJob>>('/v1/pipeline/etl-jobs', { status, cursor, limit: 50 }), [status, cursor]);
  const { outcome, act } = useAction(jobs.reload);
  const retry = (job: EtlJob) =>
    act(async () => {
      const after = await api<EtlJob>('POST', `/v1/pipeline/etl-jobs/${job.id}/retry`);
      return `Job ${after.id} is ${after.status} again.`;
    });
  return (
    <section aria-labelledby="etl-h" class="card">
      <h2 id="etl-h">ETL jobs</h2>
      <div role="group" aria-label="Job status" class="tabs">
        {STATUSES.map((s) => (
          <button key={s} type="button" aria-pressed={status === s} class={status === s ? '' : 'secondary'} onClick={() => { setStatus(s); setCursor(undefined); }}>
            {s}
          </button>
        ))}
      </div>
      <OutcomeLine outcome={outcome} />
      <Loadable state={jobs} label="ETL jobs">
        {(page) =>
          page.data.length === 0 ? (
            <p class="muted">No {status} jobs.</p>
          ) : (
            <JobsTable jobs={page.data} status={status} onRetry={(j) => void retry(j)} more={page.next_cursor ? () => setCursor(page.next_cursor!) : null} />
          )
        }
      </Loadable>
    </section>
  );
}

function JobsTable({ jobs, status, onRetry, more }: { jobs: EtlJob[]; status: string; onRetry: (j: EtlJob) => void; more: (() => void) | null }) {
  const { shown, toggle } = useShowMore(jobs, 10);
  return (
    <ScrollBox>
      <table data-testid="etl-table">
        <caption class="sr-only">{status} ETL jobs, newest first</caption>
        <thead><tr><th scope="col">Job</th><th scope="col">User</th><th scope="col">Provider</th><th scope="col">Tier</th><th scope="col">Attempts</th><th scope="col">Error</th><th scope="col">Created</th><th scope="col">Next attempt</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
        <tbody>
          {shown.map((j) => (
            <tr key={j.id} data-job-id={j.id}>
              <td>{j.id}</td>
              <td><a class="mono" href={`#/users/${enc(j.user_id)}`}>{j.user_id.slice(0, 8)}</a></td>
              <td>{j.provider}</td>
              <td>{j.tier}</td>
              <td>{j.attempts}</td>
              <td class="excerpt"><Excerpt text={j.error} /></td>
              <td><Time at={j.created_at} /></td>
              <td><Time at={j.next_attempt_at} /></td>
              <td>{j.status === 'parked' && <button type="button" class="small" onClick={() => onRetry(j)} aria-label={`Retry job ${j.id}`}>Retry</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {toggle} {more && <button type="button" class="secondary" onClick={more}>Older</button>}
    </ScrollBox>
  );
}

function Rejected({ userId }: { userId: string }) {
  const rows = useAsync(async () => (await allPages<RejectedRecord>(`/v1/users/${enc(userId)}/rejected-records`, { limit: 1000 }, 1000)).sort(byLine), [userId]);
  return (
    <section aria-labelledby="rejected-h">
      <h3 id="rejected-h">Rejected records</h3>
      <Loadable state={rows} label="rejected records">
        {(r) =>
          r.length === 0 ? (
            <p class="muted">None: every line of this user's uploads was stored.</p>
          ) : (
            <RejectedTable rows={r} />
          )
        }
      </Loadable>
    </section>
  );
}

/** Where and why lead (issue 36: on a phone the reason was past the edge); the excerpt, provider and time follow. */
function RejectedTable({ rows }: { rows: RejectedRecord[] }) {
  const { shown, toggle } = useShowMore(rows, 10);
  return (
    <ScrollBox>
      <table data-testid="rejected-table">
        <caption class="sr-only">Records the ETL could not store: the latest upload first, each upload's lines in order</caption>
        <thead><tr><th scope="col">Where</th><th scope="col">Reason</th><th scope="col">Excerpt</th><th scope="col">Provider</th><th scope="col">Rejected</th></tr></thead>
        <tbody>
          {shown.map((x, i) => (
            <tr key={i}><td data-field="location">{x.location}</td><td data-field="reason" class="reason">{x.reason}</td><td class="excerpt mono"><Excerpt text={x.excerpt} keep={48} /></td><td>{x.provider}</td><td><Time at={x.rejected_at} /></td></tr>
          ))}
        </tbody>
      </table>
      {toggle}
    </ScrollBox>
  );
}

/**
 * Sync runs per connection, newest first as the API lists them, with a manual pull per provider
 * (the same POST as the API: 409 with the reason when the connection does not sync). A build
 * without the sync-runs route answers its own 404 ("no route"): shown as such.
 */
function SyncRuns({ userId }: { userId: string }) {
  const base = `/v1/users/${enc(userId)}`;
  const runs = useAsync(async () => {
    try {
      return { available: true, runs: await allPages<SyncRun>(`${base}/sync-runs`, { limit: 1000 }, 1000) };
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && err.detail.startsWith('no route')) return { available: false, runs: [] as SyncRun[] };
      throw err;
    }
  }, [userId]);
  const connections = useAsync(() => get<{ data: Connection[] }>(`${base}/connections`), [userId]);
  const { outcome, act } = useAction(() => {
    runs.reload();
    connections.reload();
  });
  const pull = (provider: string) =>
    act(async () => {
      const run = await api<SyncRun>('POST', `${base}/connections/${enc(provider)}/sync`, {});
      return `Pull of ${provider} queued as run ${run.id} (${run.status}).`;
    });
  return (
    <section aria-labelledby="syncruns-h">
      <h3 id="syncruns-h">Sync runs</h3>
      <OutcomeLine outcome={outcome} />
      <Loadable state={runs} label="sync runs">
        {({ available, runs: list }) => {
          if (!available) return <p class="muted" data-testid="sync-runs-unavailable">This service does not pull from providers yet (no sync-runs route), so there are no sync runs to show.</p>;
          const connected = (connections.data?.data ?? []).filter((c) => c.status !== 'disconnected').map((c) => c.provider);
          const providers = [...new Set([...connected, ...list.map((r) => r.provider)])].sort();
          if (providers.length === 0) return <p class="muted">No connections and no sync runs for this user.</p>;
          return providers.map((p) => <ProviderRuns key={p} provider={p} runs={list.filter((r) => r.provider === p)} onPull={connected.includes(p) ? () => void pull(p) : null} />);
        }}
      </Loadable>
    </section>
  );
}

/** One connection's runs, newest first; the latest five, the rest a click away. */
function ProviderRuns({ provider, runs, onPull }: { provider: string; runs: SyncRun[]; onPull: (() => void) | null }) {
  const { shown, toggle } = useShowMore(runs, 5);
  return (
    <div class="provider-runs">
      <h4>
        {provider}{' '}
        {onPull && (
          <button type="button" class="small secondary" onClick={onPull} aria-label={`Pull now: ${provider}`}>
            Pull now
          </button>
        )}
      </h4>
      <ScrollBox>
        <table data-testid="sync-runs-table" data-provider={provider}>
          <caption class="sr-only">Sync runs of {provider}, newest first</caption>
          <thead><tr><th scope="col">Run</th><th scope="col">Trigger</th><th scope="col">Status</th><th scope="col">Window</th><th scope="col">Attempts</th><th scope="col">Stored</th><th scope="col">Error</th><th scope="col">Next attempt</th></tr></thead>
          <tbody>
            {runs.length === 0 && (
              <tr><td colSpan={8} class="muted">No runs yet.</td></tr>
            )}
            {shown.map((r) => (
              <tr key={r.id} data-run-id={r.id}>
                <td>{r.id}</td><td>{r.trigger}{r.data_type ? ` (${r.data_type})` : ''}</td><td data-field="status"><Badge state={r.status} /></td>
                <td class="window"><Time at={r.window_start} /> – <Time at={r.window_end} /></td><td data-field="attempts" data-failed={r.attempts}>{syncAttempts(r)}</td><td data-field="objects_stored">{r.objects_stored ?? '—'}</td>
                <td class="excerpt"><Excerpt text={r.error} /></td><td><Time at={r.next_attempt_at} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollBox>
      {toggle}
    </div>
  );
}
