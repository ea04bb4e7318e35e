import type { ProviderAnswer, ProviderRequest, PullConnector, PullContext, PulledPayload } from '../../shared/pullConnector.js';
import { isObject } from '../../shared/connectorRecords.js';
import { jsonEnvelope } from '../../shared/jsonEnvelope.js';
import { polarParser } from './parser.js';
import { polar } from './provider.js';
import { deregisterPolarUser, POLAR_ORIGINS } from './deregister.js';
import { exerciseStart } from './decodeExercises.js';
import { readInstant, localDateOf } from '../../shared/providerTimes.js';
import { HEART_RATE_SAMPLE } from './sports.js';

/**
 * Polar AccessLink pulls (docs/connectors/polar.md). The user is registered with the client once
 * (`POST /v3/users`, after `GET /v3/users/{id}` says it is not). Exercises, daily activity and
 * physical information come in transactions: each is opened, listed and every item fetched; the
 * transactions are committed in `acknowledge`, after the engine stored every payload, so a crash
 * before that gets the same data offered again. Transactions are not windowed: whatever Polar
 * offers is kept. Nights and Nightly Recharge (last 28 days) and continuous heart rate (per day
 * of the window) are plain reads.
 *
 * Polar sends several times as local wall clock without an offset. The offsets the user's nights
 * and exercises state are collected during the pull and stored with the answers that need them
 * (`{offsets, answer}` / `{date, offset, answer}`, the answer kept byte for byte).
 */
const READ_ALL = 'accesslink.read_all';
const CONTINUOUS_HR_DAYS = 28;
/** An offset learnt on a day nearby stands for a day without one, but not across more than this. */
const OFFSET_REACH_DAYS = 3;

/** The transactions each pull opened, committed by `acknowledge` of the same pull. */
const openTransactions = new WeakMap<PullContext, string[]>();

const payload = (dataType: string, answer: ProviderAnswer, ref: string): PulledPayload => ({
  dataType,
  body: answer.body,
  contentType: answer.headers.get('content-type') ?? 'application/json',
  ref,
});

// Polar's links are absolute; one that is not is refused by providerHttp when asked for, not here.
const pathOf = (url: string) => (URL.canParse(url) ? new URL(url).pathname : url);
/** A request for an address Polar answered with (transaction and item links). */
const at = (url: string): ProviderRequest => ({ path: pathOf(url), url });

class Offsets {
  private readonly byDate = new Map<string, string>();
  learn(ms: number, offset: string): void {
    this.byDate.set(localDateOf(ms, offset), offset);
  }
  /** The offset of a local date, or of the nearest day within reach; null when none is known. */
  of(date: string): string | null {
    const exact = this.byDate.get(date);
    if (exact) return exact;
    const t = Date.parse(`${date}T00:00:00Z`);
    let best: { d: number; offset: string } | null = null;
    for (const [other, offset] of this.byDate) {
      const d = Math.abs(Date.parse(`${other}T00:00:00Z`) - t) / 86_400_000;
      if (d <= OFFSET_REACH_DAYS && (!best || d < best.d)) best = { d, offset };
    }
    return best?.offset ?? null;
  }
  all(): Record<string, string> {
    return Object.fromEntries([...this.byDate].sort(([a], [b]) => (a < b ? -1 : 1)));
  }
}

async function register(ctx: PullContext, userId: string): Promise<void> {
  const known = await ctx.http({ path: `/v3/users/${userId}` });
  if (known.status !== 404) return;
  await ctx.http({ method: 'POST', path: '/v3/users', json: { 'member-id': `wellstream-${userId}` } });
}

/** Opens a transaction; null when Polar has nothing new (204). */
async function openTransaction(ctx: PullContext, userId: string, kind: string): Promise<string | null> {
  const answer = await ctx.http({ method: 'POST', path: `/v3/users/${userId}/${kind}-transactions` });
  if (answer.status === 204 || answer.status === 404) return null;
  const body = answer.json<Record<string, unknown>>();
  if (typeof body['resource-uri'] !== 'string') throw new Error(`Polar opened a ${kind} transaction without a resource-uri`);
  const open = openTransactions.get(ctx) ?? [];
  open.push(body['resource-uri']);
  openTransactions.set(ctx, open);
  return body['resource-uri'];
}

/** The item addresses a transaction lists under `key`. */
async function transactionItems(ctx: PullContext, url: string, key: string): Promise<string[]> {
  const answer = await ctx.http(at(url));
  if (answer.status !== 200) return [];
  const list = listOf(answer, key);
  return list.filter((u): u is string => typeof u === 'string');
}

/** Opens a transaction of `kind` and fetches each item it lists (`doc`: the item read as JSON, `{}` when it is not). */
async function* transactionAnswers(ctx: PullContext, userId: string, kind: string, key: string): AsyncGenerator<{ url: string; answer: ProviderAnswer; doc: Record<string, unknown> }> {
  const tx = await openTransaction(ctx, userId, kind);
  for (const url of tx ? await transactionItems(ctx, tx, key) : []) {
    ctx.signal.throwIfAborted();
    const answer = await ctx.http(at(url));
    if (answer.status !== 200) continue;
    let doc: unknown;
    try {
      doc = answer.json();
    } catch {
      doc = null;
    }
    yield { url, answer, doc: isObject(doc) ? doc : {} };
  }
}

function granted(ctx: PullContext): boolean {
  const scopes = ctx.scopes.flatMap((s) => s.split(/[ ,]+/)).filter(Boolean);
  return scopes.length === 0 || scopes.includes(READ_ALL);
}

async function* pull(ctx: PullContext): AsyncIterable<PulledPayload> {
  if (!granted(ctx)) return;
  const userId = ctx.providerUserId;
  if (!userId) throw new Error('Polar names its user in the token answer (x_user_id); this connection has none');
  const wants = (t: string) => ctx.dataType === null || ctx.dataType === t;
  const offsets = new Offsets();
  await register(ctx, userId);

  if (wants('sleep') || wants('nightly_recharge') || wants('activities') || wants('continuous_heart_rate')) {
    const nights = await ctx.http({ path: '/v3/users/sleep' });
    if (nights.status === 200) {
      for (const n of listOf(nights, 'nights').filter(isObject)) {
        try {
          const start = readInstant(n.sleep_start_time, 'sleep_start_time');
          const end = readInstant(n.sleep_end_time, 'sleep_end_time');
          offsets.learn(start.ms, start.offset);
          offsets.learn(end.ms, end.offset);
        } catch {
          // A night without readable times teaches nothing; its decoder reports it.
        }
      }
      if (wants('sleep')) yield payload('sleep', nights, '/v3/users/sleep');
    }
  }
  if (wants('nightly_recharge')) {
    const recharge = await ctx.http({ path: '/v3/users/nightly-recharge' });
    if (recharge.status === 200) yield { ...payload('nightly_recharge', recharge, '/v3/users/nightly-recharge'), body: jsonEnvelope({ offsets: offsets.all(), answer: recharge.body }) };
  }
  if (wants('exercises')) {
    for await (const { url, answer, doc: e } of transactionAnswers(ctx, userId, 'exercise', 'exercises')) {
      yield payload('exercises', answer, pathOf(url));
      let start: { ms: number; offset: string } | null = null;
      try {
        start = exerciseStart(e);
        offsets.learn(start.ms, start.offset);
      } catch {
        // Its decoder reports an exercise it cannot place; its samples could not be placed either.
      }
      if (!start) continue;
      const list = await transactionItems(ctx, `${url}/samples`, 'samples');
      const hr = list.find((u) => u.endsWith(`/${HEART_RATE_SAMPLE}`));
      if (!hr) continue;
      const samples = await ctx.http(at(hr));
      if (samples.status !== 200) continue;
      const exercise = { id: e.id, 'start-time': e['start-time'], 'start-time-utc-offset': e['start-time-utc-offset'], device: e.device ?? null };
      yield { ...payload('exercises', samples, pathOf(hr)), body: jsonEnvelope({ exercise, samples: samples.body }) };
    }
  }
  if (wants('activities')) {
    for await (const { url, answer, doc } of transactionAnswers(ctx, userId, 'activity', 'activity-log')) {
      yield payload('activities', answer, pathOf(url));
      if (typeof doc.date !== 'string') continue;
      const steps = await ctx.http(at(`${url}/step-samples`));
      if (steps.status !== 200) continue;
      yield { ...payload('activities', steps, pathOf(`${url}/step-samples`)), body: jsonEnvelope({ date: doc.date, offset: offsets.of(doc.date), answer: steps.body }) };
    }
  }
  if (wants('physical_information')) {
    for await (const { url, answer } of transactionAnswers(ctx, userId, 'physical-information', 'physical-informations')) yield payload('physical_information', answer, pathOf(url));
  }
  if (wants('continuous_heart_rate')) {
    for (const date of windowDates(ctx)) {
      ctx.signal.throwIfAborted();
      const day = await ctx.http({ path: `/v3/users/continuous-heart-rate/${date}` });
      if (day.status !== 200) continue;
      yield { ...payload('continuous_heart_rate', day, `/v3/users/continuous-heart-rate/${date}`), body: jsonEnvelope({ offset: offsets.of(date), answer: day.body }) };
    }
  }
}

/** The calendar dates the window touches, the latest CONTINUOUS_HR_DAYS of them (what Polar keeps). */
function windowDates(ctx: PullContext): string[] {
  const out: string[] = [];
  const last = new Date(ctx.window.end.getTime() - 1).toISOString().slice(0, 10);
  for (let t = Date.parse(`${last}T00:00:00Z`); t >= ctx.window.start.getTime() - 86_400_000 + 1 && out.length < CONTINUOUS_HR_DAYS; t -= 86_400_000) {
    out.unshift(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

/** The array an answer holds under `key`, or none when the answer is not JSON or lacks it. */
function listOf(answer: ProviderAnswer, key: string): unknown[] {
  try {
    const body: unknown = answer.json();
    const v = isObject(body) ? body[key] : undefined;
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** Commits the pull's transactions: Polar then no longer offers their items. */
async function acknowledge(ctx: PullContext): Promise<void> {
  const open = openTransactions.get(ctx) ?? [];
  while (open.length) {
    await ctx.http({ ...at(open[0]!), method: 'PUT' });
    open.shift();
  }
  openTransactions.delete(ctx);
}

export const polarConnector: PullConnector = {
  descriptor: polar,
  origins: POLAR_ORIGINS,
  pull,
  acknowledge,
  deregister: deregisterPolarUser,
  parser: polarParser,
};
