/**
 * The path of each pull provider's webhook address (docs/connections.md "Provider webhooks").
 * Strava and Withings sign nothing: their address ends with the application's webhook token,
 * `<path>/<token>`, as Garmin's push address ends with its inbound secret.
 */
export const WEBHOOK_PATHS: Readonly<Partial<Record<string, string>>> = {
  oura: '/webhooks/oura',
  whoop: '/webhooks/whoop',
  fitbit: '/webhooks/fitbit',
  strava: '/webhooks/strava',
  withings: '/webhooks/withings',
};
