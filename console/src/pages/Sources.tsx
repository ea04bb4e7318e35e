import { useEffect, useState } from 'preact/hooks';
import { QUANTITY_CATALOG } from '../../../src/catalog/quantityCatalog.js';
import { api, enc, get } from '../api.js';
import { OutcomeLine, useAction } from '../components/Action.js';
import { DateField } from '../components/DateField.js';
import { Loadable } from '../components/Status.js';
import { TableDetails } from '../components/TableDetails.js';
import { Time } from '../components/Time.js';
import { UserPicker } from '../components/UserPicker.js';
import { addDays, daysBack } from '../days.js';
import { fmtNum, fmtTime } from '../format.js';
import type { Priorities, PriorityPreview as Preview, Stats } from '../types.js';
import { useAsync } from '../util.js';

const GROUPS = ['*', 'activity', 'heart', 'recovery', 'body', 'sleep', 'workouts'];
const KEYS = [...GROUPS, ...QUANTITY_CATALOG.map((q) => q.type), 'sleep_analysis'];

export function SourcesPage({ userId }: { userId: string | undefined }) {
  return (
    <section aria-labelledby="sources-h">
      <h1 id="sources-h">Source order</h1>
      <UserPicker section="sources" userId={userId} />
      {userId ? <SourcesEditor key={userId} userId={userId} /> : <p class="muted">Choose a user to see and edit their order of sources per metric.</p>}
    </section>
  );
}

function SourcesEditor({ userId }: { userId: string }) {
  const base = `/v1/users/${enc(userId)}`;
  const saved = useAsync(() => get<Priorities>(`${base}/source-priorities`), [userId]);
  // The sources the user has data from: offered when adding to an order.
  const known = useAsync(async () => {
    const { start, end } = daysBack(90);
    const stats = await Promise.all(['heart_rate', 'step_count'].map((type) => get<Stats>(`${base}/samples/stats`, { type, start, end, view: 'all' }).catch(() => null)));
    return [...new Set(stats.flatMap((s) => s?.buckets.map((b) => b.source || b.provider) ?? []))].sort();
  }, [userId]);
  const [draft, setDraft] = useState<Record<string, string[]> | null>(null);
  const { outcome, act, clear } = useAction();
  const [newKey, setNewKey] = useState('heart_rate');
  const [addTo, setAddTo] = useState<Record<string, string>>({});
  const [version, setVersion] = useState(0);
  useEffect(() => {
    if (saved.data) setDraft(structuredClone(saved.data.priorities));
  }, [saved.data]);

  const update = (f: (d: Record<string, string[]>) => void) => {
    const d = structuredClone(draft ?? {});
    f(d);
    setDraft(d);
    clear();
  };
  const move = (key: string, i: number, by: number) =>
    update((d) => {
      const list = d[key]!;
      const [item] = list.splice(i, 1);
      list.splice(i + by, 0, item!);
    });
  // Keys without an order yet; the choice falls back to the first of them once its key has one.
  const freeKeys = KEYS.filter((k) => !draft?.[k]);
  const chosenKey = freeKeys.includes(newKey) ? newKey : (freeKeys[0] ?? '');
  const save = () =>
    act(async () => {
      const answer = await api<Priorities>('PUT', `${base}/source-priorities`, { priorities: draft ?? {} });
      setDraft(structuredClone(answer.priorities));
      saved.reload();
      setVersion((v) => v + 1);
      return `Saved at ${fmtTime(answer.updated_at)}; the merged view uses it from now on.`;
    });

  return (
    <Loadable state={saved} label="the source order">
      {(s) => (
        <div class="card">
          <p class="muted">
            Best source first. A metric's own order wins over its group's, the group's over <code>*</code>; sources not listed rank after the listed ones. Last saved: <Time at={s.updated_at} />.
          </p>
          <datalist id="known-sources">
            {(known.data ?? []).map((k) => (
              <option key={k} value={k} />
            ))}
          </datalist>
          {Object.keys(draft ?? {}).length === 0 && <p>No order of the user's own: the built-in order per group applies.</p>}
          <ul class="orders" data-testid="orders">
            {Object.entries(draft ?? {}).map(([key, list]) => (
              <li key={key} data-key={key}>
                <h3>{key}</h3>
                <ol>
                  {list.map((src, i) => (
                    <li key={src}>
                      <span>{src}</span>{' '}
                      <button type="button" class="small" disabled={i === 0} onClick={() => move(key, i, -1)} aria-label={`Move ${src} up in ${key}`}>
                        ↑
                      </button>
                      <button type="button" class="small" disabled={i === list.length - 1} onClick={() => move(key, i, 1)} aria-label={`Move ${src} down in ${key}`}>
                        ↓
                      </button>
                      <button type="button" class="small" onClick={() => update((d) => { d[key] = d[key]!.filter((x) => x !== src); if (!d[key]!.length) delete d[key]; })} aria-label={`Remove ${src} from ${key}`}>
                        ✕
                      </button>
                    </li>
                  ))}
                </ol>
                <form class="inline" onSubmit={(e) => { e.preventDefault(); const v = (addTo[key] ?? '').trim(); if (v && !list.includes(v)) update((d) => d[key]!.push(v)); setAddTo({ ...addTo, [key]: '' }); }}>
                  <label>
                    Add a source to {key}{' '}
                    <input list="known-sources" value={addTo[key] ?? ''} onInput={(e) => setAddTo({ ...addTo, [key]: e.currentTarget.value })} maxLength={64} />
                  </label>
                  <button type="submit" class="small">Add</button>
                </form>
              </li>
            ))}
          </ul>
          <form class="inline" onSubmit={(e) => { e.preventDefault(); if (chosenKey && !draft?.[chosenKey]) update((d) => (d[chosenKey] = [])); }}>
            <label>
              Order for{' '}
              <select aria-label="Order for" value={chosenKey} onChange={(e) => setNewKey(e.currentTarget.value)}>
                {freeKeys.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" class="secondary">Add metric or group</button>
          </form>
          <p>
            <button type="button" onClick={save}>Save order (PUT)</button>{' '}
            <button type="button" class="secondary" onClick={() => { setDraft(structuredClone(s.priorities)); clear(); }}>Discard changes</button>
          </p>
          <OutcomeLine outcome={outcome} />
          <MergedPreview base={base} draft={draft ?? s.priorities} version={version} />
        </div>
      )}
    </Loadable>
  );
}

/**
 * Which records of one metric and UTC day the merged view shows now and would show under the order
 * being edited (POST …/source-priorities/preview: the service decides, nothing is saved).
 */
function MergedPreview({ base, draft, version }: { base: string; draft: Record<string, string[]>; version: number }) {
  const [type, setType] = useState('heart_rate');
  const [day, setDay] = useState(daysBack(2).start);
  const next = addDays(day, 1);
  // A key just added has no source yet: the order previewed is the rest.
  const priorities = Object.fromEntries(Object.entries(draft).filter(([, list]) => list.length > 0));
  const order = JSON.stringify(priorities);
  const preview = useAsync(() => api<Preview>('POST', `${base}/source-priorities/preview`, { priorities, type, start: day, end: next }), [base, type, day, order, version]);
  return (
    <section aria-labelledby="preview-h">
      <h2 id="preview-h">Preview: what the merged view shows now and with this order</h2>
      <div class="toolbar">
        <label>
          Metric{' '}
          <select aria-label="Metric" value={type} onChange={(e) => setType(e.currentTarget.value)}>
            {QUANTITY_CATALOG.map((q) => (
              <option key={q.type} value={q.type}>{q.type}</option>
            ))}
          </select>
        </label>
        <DateField label="Day (UTC)" value={day} onDay={setDay} />
      </div>
      <Loadable state={preview} label="the preview">
        {(p) => {
          const counts = new Map<string, [number, number, number]>();
          for (const r of p.records) {
            const k = r.source ?? r.provider;
            const c = counts.get(k) ?? [0, 0, 0];
            c[0] += 1;
            if (r.shown_now) c[1] += 1;
            if (r.shown) c[2] += 1;
            counts.set(k, c);
          }
          return p.records.length === 0 ? (
            <p class="muted">No {type} records that day.</p>
          ) : (
            <>
              <p class="muted">Order for {type} with these settings: {p.order.join(' › ')}</p>
              <table data-testid="preview-summary">
                <caption>Records per source</caption>
                <thead>
                  <tr><th scope="col">Source</th><th scope="col">Stored</th><th scope="col">Shown now</th><th scope="col">Shown with this order</th></tr>
                </thead>
                <tbody>
                  {[...counts.entries()].map(([k, [n, now, next]]) => (
                    <tr key={k} data-source={k}><th scope="row">{k}</th><td>{n}</td><td data-field="shown_now">{now}</td><td data-field="shown">{next}</td></tr>
                  ))}
                </tbody>
              </table>
              <TableDetails summary="Every record" caption="Records of the day, with whether the merged view shows each now and with this order">
                <thead><tr><th scope="col">Start</th><th scope="col">Value</th><th scope="col">Source</th><th scope="col">Now</th><th scope="col">With this order</th></tr></thead>
                <tbody>
                  {p.records.map((r) => (
                    <tr key={r.id}><td><Time at={r.start_date} /></td><td>{fmtNum(r.value)} {r.unit}</td><td>{r.source ?? r.provider}</td><td>{r.shown_now ? 'shown' : 'hidden'}</td><td>{r.shown ? 'shown' : 'hidden'}</td></tr>
                  ))}
                </tbody>
              </TableDetails>
            </>
          );
        }}
      </Loadable>
    </section>
  );
}

