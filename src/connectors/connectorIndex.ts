import type { DeviceParser } from '../../commands/ingestion/records.js';
import type { PullConnector, PushConnector } from './pullConnector.js';
import { fitbitConnector } from './fitbit/pull.js';
import { garminConnector } from './garmin/connector.js';
import { stravaConnector } from './strava/pull.js';
import { withingsConnector } from './withings/pull.js';
import { ouraConnector } from './oura/pull.js';
import { polarConnector } from './polar/pull.js';
import { whoopConnector } from './whoop/pull.js';

/** The connectors of this build, by provider slug (one line each; their code is in src/connectors/<slug>/). */
export const PULL_CONNECTORS: Readonly<Partial<Record<string, PullConnector>>> = {
  fitbit: fitbitConnector,
  strava: stravaConnector,
  withings: withingsConnector,
  oura: ouraConnector,
  polar: polarConnector,
  whoop: whoopConnector,
};

export const PUSH_CONNECTORS: Readonly<Partial<Record<string, PushConnector>>> = {
  garmin: garminConnector,
};

/** The connectors' decoders, for the ETL (src/pipeline/etlParsers.ts). */
export const connectorParsers: Readonly<Record<string, DeviceParser>> = Object.fromEntries(
  [...Object.values(PULL_CONNECTORS), ...Object.values(PUSH_CONNECTORS)].map((c) => [c!.descriptor.slug, c!.parser]),
);
