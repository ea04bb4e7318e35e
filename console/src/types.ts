/** The API's answers as the console reads them (field names as the service serves them). */
export type User = { id: string; external_ref: string | null; status: string; created_at: string };

export type CoverageDay = { provider: string; date: string; records: number; metrics: Record<string, number>; last_synced_at: string };
export type Coverage = { pending_jobs: number; parked_jobs: number; rejected_records: number; truncated: boolean; days: CoverageDay[] };

export type Bucket = { start: string; provider: string; source: string; unit: string; count: number; sum: number; avg: number; min: number; max: number };
export type Stats = { type: string; interval: 'hour' | 'day'; tz: string; view: 'merged' | 'all'; start: string; end: string; truncated: boolean; buckets: Bucket[] };

export type Provenance = { provider: string; source: string | null; device: string | null; ingested_at: string };
export type SleepSession = Provenance & {
  id: number;
  bedtime_start: string;
  bedtime_end: string;
  total_sleep_seconds: number | null;
  deep_sleep_seconds: number | null;
  rem_sleep_seconds: number | null;
  light_sleep_seconds: number | null;
  awake_seconds: number | null;
  sleep_score: number | null;
  resting_hr: number | null;
  hrv_avg_ms: number | null;
};
export type SleepPhase = Provenance & { id: number; session_id: number; phase: string; start_date: string; end_date: string; duration_s: number };
export type Workout = Provenance & {
  id: number;
  type: string;
  start_date: string;
  end_date: string;
  duration_s: number | null;
  active_energy_kcal: number | null;
  distance_m: number | null;
  avg_heart_rate: number | null;
  max_heart_rate: number | null;
  steps: number | null;
  track: Record<string, unknown> | null;
};
export type RoutePoint = { workout_id: number; timestamp: string; latitude: number; longitude: number; altitude_m: number | null; speed_mps: number | null };

export type Freshness = {
  provider: string;
  kind: string;
  state: 'disconnected' | 'needs_reauth' | 'syncing' | 'failing' | 'stale' | 'fresh';
  synced_through: string | null;
  lag_seconds: number | null;
  last_received_at: string | null;
  next_pull_at: string | null;
  last_error: string | null;
};
export type Connection = {
  provider: string;
  status: 'active' | 'needs_reauth' | 'disconnected';
  last_sync_at: string | null;
  health: { healthy: boolean; reason: string | null; action: string | null; since: string | null; retry_at: string | null };
};
export type Priorities = { priorities: Record<string, string[]>; updated_at: string | null };

export type Sample = Provenance & { id: number; type: string; value: number; unit: string; start_date: string; end_date: string };

export type Webhook = {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  failing_since: string | null;
  last_success_at: string | null;
  created_at: string;
  updated_at: string;
};
export type Attempt = { id: number; attempt: number; started_at: string; duration_ms: number; status_code: number | null; error: string | null; response_body_excerpt: string | null };
export type Delivery = {
  id: number;
  event_id: string;
  event_type: string;
  status: 'pending' | 'running' | 'done' | 'parked';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
  replay_of: number | null;
  attempt_history: Attempt[];
};

export type EtlJob = { id: number; user_id: string; provider: string; tier: string; status: string; attempts: number; error: string | null; created_at: string; next_attempt_at: string | null };
export type RejectedRecord = { provider: string; location: string; reason: string; excerpt: string; rejected_at: string };
export type SyncRun = {
  id: number;
  provider: string;
  trigger: string;
  status: string;
  data_type: string | null;
  window_start: string;
  window_end: string;
  attempts: number;
  objects_stored: number | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  next_attempt_at: string | null;
};

export type Tenant = { id: string; name: string; created_at: string };
export type ApiKey = { id: string; created_at: string; revoked_at: string | null };
export type AuditEntry = { id: string; at: string; actor: string; actor_id: string; action: string; method: string; path: string; status: number; target: string | null };

/** contracts §12: an upload or import with its outcome. */
export type Upload = {
  upload_id: string;
  provider: string;
  bytes: number;
  status: 'receiving' | 'accepted' | 'processing' | 'done' | 'failed' | 'parked';
  received_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: { bytes_read: number; bytes_total: number; records_read: number } | null;
  records: Record<string, number>;
  unchanged: number;
  rejected: number;
  rejections: { at: string; reason: string }[];
  error: string | null;
};
