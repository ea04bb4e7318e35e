import type { DataHandler } from '../sandboxServer.js';
import { fitbitData } from './fitbit.js';
import { garminData } from './garmin.js';
import { ouraData } from './oura.js';
import { polarData } from './polar.js';
import { whoopData } from './whoop.js';
import { stravaData } from './strava.js';
import { withingsData } from './withings.js';

/** Every provider's data API in the sandbox, one file per provider beside this one. */
export const SANDBOX_DATA: Partial<Record<string, DataHandler>> = {
  fitbit: fitbitData,
  garmin: garminData,
  oura: ouraData,
  polar: polarData,
  whoop: whoopData,
  strava: stravaData,
  withings: withingsData,
};
