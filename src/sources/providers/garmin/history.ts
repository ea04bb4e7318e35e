import { ProviderCallError } from '../../shared/oauthClient.js';
import type { PullContext } from '../../shared/pullConnector.js';
import { GARMIN_ORIGINS } from './userId.js';
import { SUMMARY_TYPES, type SummaryType } from './vocabulary.js';

/** Garmin's Backfill API path of each summary type (its names differ from the push keys in places). */
export const BACKFILL_PATH: Readonly<Record<SummaryType, string>> = {
  dailies: '/wellness-api/rest/backfill/dailies',
  epochs: '/wellness-api/rest/backfill/epochs',
  sleeps: '/wellness-api/rest/backfill/sleeps',
  activities: '/wellness-api/rest/backfill/activities',
  activityDetails: '/wellness-api/rest/backfill/activityDetails',
  bodyComps: '/wellness-api/rest/backfill/bodyComps',
  hrv: '/wellness-api/rest/backfill/hrv',
  stressDetails: '/wellness-api/rest/backfill/stressDetails',
  pulseox: '/wellness-api/rest/backfill/pulseOx',
  respiration: '/wellness-api/rest/backfill/respiration',
  userMetrics: '/wellness-api/rest/backfill/userMetrics',
};

/** Garmin takes at most 90 days per backfill request. */
export const BACKFILL_MAX_SECONDS = 90 * 86_400;

/**
 * Asks Garmin to push the window's history of every summary type the grant covers, in spans of
 * at most 90 days. Garmin answers 202 and pushes the summaries later to the registered inbound
 * address, like any new data; a 409 means the same span was already asked for (a retried run), so
 * it counts as asked. A notification naming one summary type asks for that one; what arrives of a
 * category the connection does not hold is dropped by the inbound route, as any push.
 */
export async function requestGarminHistory(ctx: PullContext): Promise<void> {
  const start = Math.floor(ctx.window.start.getTime() / 1000);
  const end = Math.floor(ctx.window.end.getTime() / 1000);
  const types = SUMMARY_TYPES.filter((t) => ctx.dataType === null || ctx.dataType === t);
  for (const type of types) {
    for (let from = start; from < end; from += BACKFILL_MAX_SECONDS) {
      const to = Math.min(end, from + BACKFILL_MAX_SECONDS);
      try {
        const answer = await ctx.http({ path: BACKFILL_PATH[type], query: { summaryStartTimeInSeconds: String(from), summaryEndTimeInSeconds: String(to) } });
        if (answer.status === 404) throw new ProviderCallError('rejected', `Garmin has no backfill for ${type} (404)`, null, 404);
      } catch (err) {
        if (err instanceof ProviderCallError && err.status === 409) continue;
        throw err;
      }
    }
  }
}

export const garminHistory = { origins: GARMIN_ORIGINS, request: requestGarminHistory };
