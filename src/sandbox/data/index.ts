import type { DataHandler } from '../sandboxTypes.js';
import { dexcomData } from './dexcom.js';
import { fitbitData } from './fitbit.js';
import { garminSandbox } from './garmin.js';
import { googleData } from './google.js';
import { notificationSubscriptions } from './notificationSubscriptions.js';
import { ouraData } from './oura.js';
import { polarSandbox } from './polar.js';
import { whoopData } from './whoop.js';
import { stravaData } from './strava.js';
import { withingsData } from './withings.js';

/** The first handler that knows the request answers it. */
const either =
  (...handlers: DataHandler[]): DataHandler =>
  (ctx) => {
    for (const h of handlers) {
      const answer = h(ctx);
      if (answer) return answer;
    }
    return null;
  };

/**
 * Every provider's data API in the sandbox, one file per provider beside this one. Made anew for
 * each sandbox: the APIs that remember what they were asked (registrations, subscriptions, backfill
 * spans) remember it for that sandbox alone.
 */
export function sandboxData(): Partial<Record<string, DataHandler>> {
  const subscriptions = notificationSubscriptions();
  return {
    fitbit: either(subscriptions.fitbit, fitbitData),
    garmin: garminSandbox(),
    oura: ouraData,
    polar: polarSandbox(),
    whoop: whoopData,
    strava: stravaData,
    withings: either(subscriptions.withings, withingsData),
    dexcom: dexcomData,
    google: googleData,
  };
}
