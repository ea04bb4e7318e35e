import type { DeviceParser } from '../../commands/ingestion/records.js';
import type { PullConnector, PushConnector } from './shared/pullConnector.js';
import { fitbitConnector } from './providers/fitbit/pull.js';
import { garminConnector } from './providers/garmin/connector.js';
import { stravaConnector } from './providers/strava/pull.js';
import { withingsConnector } from './providers/withings/pull.js';
import { ouraConnector } from './providers/oura/pull.js';
import { polarConnector } from './providers/polar/pull.js';
import { whoopConnector } from './providers/whoop/pull.js';

/** The connectors of this build, by provider slug (one line each; their code is in src/sources/providers/<slug>/). */
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

/** The connectors' decoders, for the ETL (src/processes/etl/etlParsers.ts). */
export const connectorParsers: Readonly<Record<string, DeviceParser>> = Object.fromEntries(
  [...Object.values(PULL_CONNECTORS), ...Object.values(PUSH_CONNECTORS)].map((c) => [c!.descriptor.slug, c!.parser]),
);
