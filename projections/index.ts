import type { Projection } from '../src/projector/projection.js';
import { auditLogProjection } from './audit/auditLogProjection.js';
import { deletionJobsProjection } from './deletions/deletionJobsProjection.js';
import { tenantsProjection } from './tenants/tenantsProjection.js';
import { usersProjection } from './users/usersProjection.js';
import { etlJobsProjection } from './ingestion/etlJobsProjection.js';
import { uploadsProjection } from './ingestion/uploadsProjection.js';
import { samplesProjection } from './records/samplesProjection.js';
import { categorySamplesProjection } from './records/categorySamplesProjection.js';
import { sleepProjection } from './records/sleepProjection.js';
import { workoutsProjection } from './records/workoutsProjection.js';
import { nutritionProjection } from './records/nutritionProjection.js';
import { dailySummariesProjection } from './records/dailySummariesProjection.js';
import { ecgProjection } from './records/ecgProjection.js';
import { heartbeatSeriesProjection } from './records/heartbeatSeriesProjection.js';
import { menstrualCyclesProjection } from './records/menstrualCyclesProjection.js';
import { observationsProjection } from './records/observationsProjection.js';
import { rejectedRecordsProjection } from './ingestion/rejectedRecordsProjection.js';
import { PRIORITIES_SET } from './records/mergedView/mergedFlags.js';
import { webhookEndpointsProjection } from './webhooks/webhookEndpointsProjection.js';
import { providerKeysProjection } from './connections/providerKeysProjection.js';
import { connectionsProjection } from './connections/connectionsProjection.js';
import { connectSessionsProjection } from './connections/connectSessionsProjection.js';
import { tagsProjection } from './tags/tagsProjection.js';
import { syncRunsProjection } from './sync/syncRunsProjection.js';

/**
 * The read models of ingested records: the bulk of the write volume. The service applies them on
 * a projector thread of their own, so a large upload never holds up the thread answering HTTP.
 */
export const recordProjections: readonly Projection[] = [
  samplesProjection,
  categorySamplesProjection,
  sleepProjection,
  workoutsProjection,
  nutritionProjection,
  dailySummariesProjection,
  ecgProjection,
  heartbeatSeriesProjection,
  menstrualCyclesProjection,
  observationsProjection,
  rejectedRecordsProjection,
];

/**
 * The projections that keep a merged view (they read the user's source order): a new order is
 * applied by all of them before its PUT answers.
 */
export const MERGED_VIEW_PROJECTIONS: readonly string[] = recordProjections.filter((p) => p.eventTypes.includes(PRIORITIES_SET)).map((p) => p.name);

/** Every projection the service runs; the CLI's status and rebuild act on this list. */
export const projections: readonly Projection[] = [tenantsProjection, usersProjection, deletionJobsProjection, auditLogProjection, etlJobsProjection, uploadsProjection, webhookEndpointsProjection, tagsProjection, providerKeysProjection, connectionsProjection, connectSessionsProjection, syncRunsProjection, ...recordProjections];
