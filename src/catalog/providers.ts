import { UUID_RE } from '../shared/ids.js';
import { CLIENT_KEYS, clientKeysReason, type ProviderFacts } from './providerFacts.js';

/**
 * The source catalog: one row per provider the service connects to (contracts §7). A row is what
 * the domain may know of a provider: its name and kind, the data types its connector reads, the
 * keys a tenant sets and their rules, the scopes a consent asks for and the categories each one
 * covers, and where its webhooks arrive. Everything about talking to it is in its folder,
 * src/sources/providers/<slug>/, registered in src/sources/registry.ts.
 */

export const OURA = {
  slug: 'oura',
  name: 'Oura',
  kind: 'oauth',
  dataTypes: ['daily_activity', 'daily_sleep', 'sleep', 'daily_readiness', 'heartrate', 'workout', 'daily_spo2', 'personal_info'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k),
  oauth: { pkce: false, scopes: { personal: ['profile'], daily: ['activity', 'sleep'], heartrate: ['heart'], workout: ['workouts'], spo2: ['heart'] } },
  webhookPath: '/webhooks/oura',
  historyDays: null,
  notes: null,
} satisfies ProviderFacts;

export const WHOOP = {
  slug: 'whoop',
  name: 'WHOOP',
  kind: 'oauth',
  dataTypes: ['cycle', 'recovery', 'sleep', 'workout', 'body_measurement'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k, UUID_RE.test(k.CLIENT_ID ?? '') ? null : 'WHOOP client ids are UUIDs'),
  oauth: {
    pkce: false,
    scopes: {
      offline: [],
      'read:profile': ['profile'],
      'read:cycles': ['activity'],
      'read:recovery': ['heart'],
      'read:sleep': ['sleep'],
      'read:workout': ['workouts'],
      'read:body_measurement': ['body'],
    },
  },
  webhookPath: '/webhooks/whoop',
  historyDays: null,
  notes: null,
} satisfies ProviderFacts;

export const WITHINGS = {
  slug: 'withings',
  name: 'Withings',
  kind: 'oauth',
  dataTypes: ['measure', 'activity', 'sleep', 'workouts'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k, /^[0-9a-f]{64}$/.test(k.CLIENT_ID ?? '') ? null : 'Withings client ids are 64 lower-case hexadecimal characters'),
  oauth: { pkce: false, scopes: { 'user.info': ['profile'], 'user.metrics': ['body', 'heart'], 'user.activity': ['activity', 'sleep', 'workouts'] } },
  webhookPath: '/webhooks/withings',
  historyDays: null,
  notes: null,
} satisfies ProviderFacts;

export const POLAR = {
  slug: 'polar',
  name: 'Polar',
  kind: 'oauth',
  dataTypes: ['exercises', 'activities', 'physical_information', 'sleep', 'nightly_recharge', 'continuous_heart_rate'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k, UUID_RE.test(k.CLIENT_ID ?? '') ? null : 'Polar client ids are UUIDs'),
  oauth: { pkce: false, scopes: { 'accesslink.read_all': ['activity', 'heart', 'sleep', 'workouts'] } },
  historyDays: 365,
  notes: 'A disconnect deregisters the user from the application at Polar (AccessLink otherwise keeps the registration, and the user stays listed in the application).',
} satisfies ProviderFacts;

/** Fitbit's payloads, each with the scope that opens it (src/sources/providers/fitbit/dataTypes.ts). */
export const FITBIT = {
  slug: 'fitbit',
  name: 'Fitbit',
  kind: 'oauth',
  dataTypes: ['activity_summary', 'heart_intraday', 'steps_intraday', 'activity_logs', 'sleep', 'hrv', 'spo2', 'breathing_rate', 'weight', 'body_fat'] as const,
  keys: [...CLIENT_KEYS, { name: 'SUBSCRIBER_VERIFICATION_CODE', required: false, secret: true }],
  validateKeys: (k) => clientKeysReason(k, /^[0-9A-Z]{6}$/.test(k.CLIENT_ID ?? '') ? null : 'Fitbit client ids are 6 upper-case letters or digits'),
  oauth: {
    pkce: true,
    scopes: {
      activity: ['activity', 'workouts'],
      heartrate: ['heart'],
      sleep: ['sleep'],
      weight: ['body'],
      nutrition: ['nutrition'],
      oxygen_saturation: ['heart'],
      respiratory_rate: ['heart'],
      profile: ['profile'],
    },
  },
  webhookPath: '/webhooks/fitbit',
  historyDays: null,
  notes: 'Retired: Fitbit\'s Web API and OAuth endpoints answer 410 Gone since 2026-11-02. Fitbit and Pixel Watch data is served by the Google Health API (provider google); users consent again there.',
  retirement: { since: '2026-11-02', successor: 'google' },
} satisfies ProviderFacts;

export const STRAVA = {
  slug: 'strava',
  name: 'Strava',
  kind: 'oauth',
  dataTypes: ['activities', 'streams'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k, /^[0-9]{1,12}$/.test(k.CLIENT_ID ?? '') ? null : 'Strava client ids are numbers'),
  oauth: { pkce: false, scopes: { read: ['profile'], 'activity:read_all': ['activity', 'workouts'] } },
  webhookPath: '/webhooks/strava',
  historyDays: null,
  notes: 'Strava\'s API agreement (revised June 2026) lets an application show an athlete\'s data to that athlete only and forbids using it to train models; read it before enabling Strava for a tenant.',
} satisfies ProviderFacts;

const GARMIN_ENVIRONMENTS = ['production', 'evaluation'];

/**
 * ENVIRONMENT names the Garmin Connect developer environment the keys belong to (evaluation keys
 * cannot reach production users). INBOUND_SECRET: the last path segment of the inbound address the
 * tenant registers in its Garmin application's endpoint configuration (Garmin does not sign
 * pushes; docs/connectors/garmin.md).
 */
export const GARMIN = {
  slug: 'garmin',
  name: 'Garmin',
  kind: 'push',
  dataTypes: ['dailies', 'epochs', 'sleeps', 'activities', 'activityDetails', 'bodyComps', 'hrv', 'stressDetails', 'pulseox', 'respiration', 'userMetrics'],
  keys: [...CLIENT_KEYS, { name: 'ENVIRONMENT', required: false, secret: false }, { name: 'INBOUND_SECRET', required: false, secret: true }],
  validateKeys: (k) =>
    clientKeysReason(
      k,
      k.ENVIRONMENT === undefined || GARMIN_ENVIRONMENTS.includes(k.ENVIRONMENT) ? null : `ENVIRONMENT must be one of ${GARMIN_ENVIRONMENTS.join(', ')}`,
      k.INBOUND_SECRET === undefined || /^[A-Za-z0-9._~-]{24,256}$/.test(k.INBOUND_SECRET) ? null : 'INBOUND_SECRET must be 24 to 256 letters, digits or . _ ~ -',
    ),
  oauth: { pkce: true, scopes: { HEALTH_EXPORT: ['activity', 'heart', 'sleep', 'body'], ACTIVITY_EXPORT: ['workouts'] } },
  historyDays: 30,
  notes: 'Garmin Connect Developer Program: keys are granted on application, and evaluation keys reach test accounts only. History arrives as pushes after the backfill asks for it.',
} satisfies ProviderFacts;

const GOOGLE_SCOPE = 'https://www.googleapis.com/auth/googlehealth';

/**
 * Google Health API v4: Fitbit and Pixel Watch data since Fitbit's Web API was retired. Read-only
 * scopes, each covering a family of data types (src/sources/providers/google/dataTypes.ts); the
 * data types are the API's own hyphenated identifiers.
 */
export const GOOGLE = {
  slug: 'google',
  name: 'Google Health',
  kind: 'oauth',
  dataTypes: [
    'heart-rate',
    'steps',
    'distance',
    'active-energy-burned',
    'sleep',
    'exercise',
    'weight',
    'body-fat',
    'oxygen-saturation',
    'heart-rate-variability',
    'daily-resting-heart-rate',
    'daily-respiratory-rate',
    'vo2-max',
  ] as const,
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k, /^[0-9]+-[0-9a-z]+\.apps\.googleusercontent\.com$/.test(k.CLIENT_ID ?? '') ? null : 'Google OAuth client ids end in .apps.googleusercontent.com'),
  oauth: {
    pkce: true,
    scopes: {
      [`${GOOGLE_SCOPE}.activity_and_fitness.readonly`]: ['activity', 'workouts'],
      [`${GOOGLE_SCOPE}.health_metrics_and_measurements.readonly`]: ['heart', 'body'],
      [`${GOOGLE_SCOPE}.sleep.readonly`]: ['sleep'],
    },
  },
  webhookPath: '/webhooks/google',
  historyDays: null,
  notes: 'Serves Fitbit and Pixel Watch data since Fitbit\'s Web API was retired (2026-11-02): users connect again here. Google requires a verified OAuth application (restricted health scopes) before production users can consent.',
} satisfies ProviderFacts;

/**
 * Dexcom API v3 (continuous glucose). One scope, `offline_access`, opens every record type: the
 * glucose readings and calibrations (body measurements), and the user's logged carbs (nutrition).
 * DEXCOM_ENVIRONMENT picks the sandbox or production origin (README "Configuration").
 */
export const DEXCOM = {
  slug: 'dexcom',
  name: 'Dexcom',
  kind: 'oauth',
  dataTypes: ['dataRange', 'egvs', 'calibrations', 'events', 'devices'],
  keys: CLIENT_KEYS,
  validateKeys: (k) => clientKeysReason(k),
  oauth: { pkce: false, scopes: { offline_access: ['body', 'nutrition'] } },
  historyDays: null,
  notes: 'Dexcom serves readings retrospectively, with a delay (not a live feed); a backfill reaches back to the first record the user\'s dataRange names. Production access needs an approved application; the sandbox answers for Dexcom\'s test users.',
} satisfies ProviderFacts;

/** Where DEXCOM_ENVIRONMENT=sandbox sends every Dexcom call when DEXCOM_BASE_URL is not set. */
export const DEXCOM_SANDBOX_ORIGIN = 'https://sandbox-api.dexcom.com';
export const DEXCOM_ENVIRONMENTS = ['production', 'sandbox'] as const;

/** The oauth and push providers of this build, in the order GET /v1/providers lists them. */
export const CONNECTED_PROVIDERS: readonly ProviderFacts[] = [OURA, WHOOP, WITHINGS, POLAR, FITBIT, STRAVA, GARMIN, GOOGLE, DEXCOM];

/** Their slugs, as a 404 for an unknown one lists them (contracts §17). */
export const CONNECTED_SLUGS: readonly string[] = CONNECTED_PROVIDERS.map((p) => p.slug);

const bySlug = new Map(CONNECTED_PROVIDERS.map((p) => [p.slug, p]));

export function connectedProvider(slug: string): ProviderFacts | null {
  return bySlug.get(slug) ?? null;
}
