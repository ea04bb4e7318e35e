/**
 * The client keys the sandbox accepts per provider, shaped as each provider issues them (the
 * tenant provider keys route checks those shapes), so a sandbox run exercises the same rules as
 * a real one. `npm run sandbox` prints them as settings.
 */
export const SANDBOX_CLIENTS: Readonly<Record<string, { id: string; secret: string }>> = {
  oura: { id: 'SANDBOXOURACLIENT', secret: 'sandbox-oura-secret' },
  whoop: { id: '5a1d0b3e-7c2f-4e8a-9b6d-1f0e2d3c4b5a', secret: 'sandbox-whoop-secret' },
  withings: { id: 'a3f1c9e27b8d4f6a0c5e1b2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a', secret: 'sandbox-withings-secret' },
  polar: { id: 'c0ffee00-1234-4abc-8def-0123456789ab', secret: 'sandbox-polar-secret' },
  fitbit: { id: '23SBOX', secret: 'sandbox-fitbit-secret' },
  strava: { id: '104729', secret: 'sandbox-strava-secret' },
  garmin: { id: 'sandbox-garmin-consumer', secret: 'sandbox-garmin-secret' },
  google: { id: '123456789012-sandboxhealth0000000000000000.apps.googleusercontent.com', secret: 'sandbox-google-secret' },
  dexcom: { id: 'SandboxDexcomClient0000000000001', secret: 'sandbox-dexcom-secret' },
};
