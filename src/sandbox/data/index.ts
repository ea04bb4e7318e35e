import type { DataHandler } from '../sandboxTypes.js';
import { dexcomData } from './dexcom.js';
import { fitbitData } from './fitbit.js';
import { garminData } from './garmin.js';
import { googleData } from './google.js';
import { fitbitSubscriptions, withingsSubscriptions } from './notificationSubscriptions.js';
import { ouraData } from './oura.js';
import { polarData } from './polar.js';
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

/** Every provider's data API in the sandbox, one file per provider beside this one. */
export const SANDBOX_DATA: Partial<Record<string, DataHandler>> = {
  fitbit: either(fitbitSubscriptions, fitbitData),
  garmin: garminData,
  oura: ouraData,
  polar: polarData,
  whoop: whoopData,
  strava: stravaData,
  withings: either(withingsSubscriptions, withingsData),
  dexcom: dexcomData,
  google: googleData,
};
