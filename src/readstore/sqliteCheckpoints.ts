import type { Checkpoint } from './readStore.js';

/**
 * The projections' checkpoints in the embedded read store: one row per projection, written in the
 * same transaction as the batch it ends (sqliteReadStore.ts).
 */
export const CHECKPOINTS_DDL = `CREATE TABLE IF NOT EXISTS _checkpoints (
  projection TEXT PRIMARY KEY, position INTEGER NOT NULL, status TEXT NOT NULL,
  updated_at TEXT NOT NULL, last_event_at TEXT)`;

export type CheckpointRow = { projection: string; position: number; status: 'live' | 'rebuilding'; updated_at: string; last_event_at: string | null };

export const READ_CHECKPOINT = 'SELECT * FROM _checkpoints WHERE projection = ?';

/** Parameters: projection, position, status, updated_at, last_event_at. */
export const WRITE_CHECKPOINT = `INSERT INTO _checkpoints (projection, position, status, updated_at, last_event_at) VALUES (?, ?, ?, ?, ?)
  ON CONFLICT(projection) DO UPDATE SET position = excluded.position, status = excluded.status,
    updated_at = excluded.updated_at, last_event_at = excluded.last_event_at`;

export function toCheckpoint(row: CheckpointRow): Checkpoint {
  return { projection: row.projection, position: row.position, status: row.status, updatedAt: row.updated_at, lastEventAt: row.last_event_at };
}
