import type { PushConnector } from '../pullConnector.js';
import { garminParser } from './parser.js';
import { garmin } from './provider.js';
import { splitNotification } from './receive.js';

/** Garmin Health API: push only (docs/connectors/garmin.md); registration changes are read by the inbound route. */
export const garminConnector: PushConnector = {
  descriptor: garmin,
  receive: ({ body }) => splitNotification(body).payloads,
  parser: garminParser,
};
