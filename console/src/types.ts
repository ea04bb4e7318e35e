import type { paths } from './api.gen.js';

/**
 * The API's answers as the console reads them: each named for what the console shows, taken
 * from the types `npm run openapi:types` generates from the service's OpenAPI document
 * (api.gen.ts), so a change to an answer shows up here as a type error instead of a wrong page.
 */
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
/**
 * The JSON body of `method path` answering `status`. An answer the document lacks is a string
 * that says so, not `never`: the pages that read it stop compiling.
 */
type Json<P extends keyof paths, M extends Method, S extends number = 200> = paths[P][M] extends { responses: infer R }
  ? R extends Record<S, { content: { 'application/json': infer T } }>
    ? T
    : `no JSON ${S} answer of ${M} ${P}`
  : `no ${M} ${P}`;
/** One item of a page (`{ data: [...] }`). */
type Item<T> = T extends { data: (infer I)[] } ? I : 'not a page';

export type User = Json<'/v1/users/{id}', 'get'>;

export type Coverage = Json<'/v1/users/{id}/coverage', 'get'>;
export type CoverageDay = Coverage['days'][number];

export type Stats = Json<'/v1/users/{id}/samples/stats', 'get'>;
export type Bucket = Stats['buckets'][number];

export type SleepSession = Item<Json<'/v1/users/{id}/sleep', 'get'>>;
export type SleepPhase = Item<Json<'/v1/users/{id}/sleep/{session_id}/phases', 'get'>>;
export type Workout = Item<Json<'/v1/users/{id}/workouts', 'get'>>;
export type RoutePoint = Item<Json<'/v1/users/{id}/workouts/{workout_id}/route', 'get'>>;
export type Sample = Item<Json<'/v1/users/{id}/samples', 'get'>>;

export type Freshness = Item<Json<'/v1/users/{id}/freshness', 'get'>>;
export type Connection = Item<Json<'/v1/users/{id}/connections', 'get'>>;
export type Priorities = Json<'/v1/users/{id}/source-priorities', 'get'>;
export type PriorityPreview = Json<'/v1/users/{id}/source-priorities/preview', 'post'>;

export type Webhook = Json<'/v1/webhooks/{webhook_id}', 'get'>;
export type Delivery = Json<'/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', 'get'>;
export type Attempt = Delivery['attempt_history'][number];

export type EtlJob = Item<Json<'/v1/pipeline/etl-jobs', 'get'>>;
export type RejectedRecord = Item<Json<'/v1/users/{id}/rejected-records', 'get'>>;
export type SyncRun = Json<'/v1/users/{id}/sync-runs/{run_id}', 'get'>;

export type Tenant = Item<Json<'/v1/admin/tenants', 'get'>>;
export type ApiKey = Item<Json<'/v1/admin/tenants/{tenant_id}/api-keys', 'get'>>;
export type AuditEntry = Item<Json<'/v1/audit-log', 'get'>>;

/** contracts §12: an upload or import with its outcome. */
export type Upload = Json<'/v1/users/{id}/uploads/{provider}/{upload_id}', 'get'>;
