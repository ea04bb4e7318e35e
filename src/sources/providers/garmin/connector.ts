import type { PushConnector } from '../../shared/pullConnector.js';
import { garminHistory } from './history.js';
import { garminParser } from './parser.js';
import { garmin } from './provider.js';
import { splitNotification } from './receive.js';
import { readGarminUserId } from './userId.js';

/** Garmin Health API: pushes (docs/connectors/garmin.md); registration changes are read by the inbound route; history by the Backfill API. */
export const garminConnector: PushConnector = {
  descriptor: garmin,
  readUserId: readGarminUserId,
  receive: ({ body }) => splitNotification(body).payloads,
  parser: garminParser,
  history: garminHistory,
};
