import type { Projection } from '../src/projector/projection.js';
import { auditLogProjection } from './audit/auditLogProjection.js';
import { deletionJobsProjection } from './deletions/deletionJobsProjection.js';
import { tenantsProjection } from './tenants/tenantsProjection.js';
import { usersProjection } from './users/usersProjection.js';

/** Every projection the service runs; the CLI's status and rebuild act on this list. */
export const projections: readonly Projection[] = [tenantsProjection, usersProjection, deletionJobsProjection, auditLogProjection];
