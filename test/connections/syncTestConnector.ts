import { oura } from '../../src/sources/providers/oura/provider.js';
import type { PulledPayload, PullConnector, PullContext } from '../../src/sources/shared/pullConnector.js';
import type { DataHandler } from '../../src/sandbox/sandboxTypes.js';

/**
 * A test-only pull connector in Oura's place (its descriptor and OAuth, test data paths in the
 * sandbox): the sync engine's tests plan its pages and failures.
 */
/** What the test connector does on its next pulls. */
export const plan = { pages: 3, failAfter: null as number | null, pulls: 0, hold: null as Promise<void> | null, seen: [] as (string | null)[], answer400: false };

/** A page per request, its body naming the window: the same window answers the same bytes. */
export const testData: DataHandler = ({ path, query, token }) => {
  if (path !== '/test/page') return null;
  if (plan.answer400) return { status: 400, body: { error: 'invalid_request', error_description: 'start_date is after end_date' } };
  return { status: 200, body: { user: token.user, page: Number(query.get('n')), start: query.get('start'), end: query.get('end') } };
};

export const testConnector: PullConnector = {
  descriptor: oura,
  origins: { data: 'https://api.ouraring.com' },
  async *pull(ctx: PullContext): AsyncIterable<PulledPayload> {
    plan.pulls++;
    plan.seen.push(ctx.dataType);
    if (plan.hold) await plan.hold;
    for (let n = 0; n < plan.pages; n++) {
      if (plan.failAfter !== null && n === plan.failAfter) throw new Error('the connector stopped mid-run');
      const answer = await ctx.http({ path: '/test/page', query: { n: String(n), start: ctx.window.start.toISOString(), end: ctx.window.end.toISOString() } });
      yield { dataType: 'test_page', body: answer.body, contentType: 'application/json', ref: `/test/page?n=${n}` };
    }
  },
  parser: { parse: async function* () {} } as unknown as PullConnector['parser'],
};
