import { CONSENT_EVENTS, CONSENT_STATES, type ConsentEventDoc, type ConsentStateDoc } from '../../projections/connections/connectionsProjection.js';
import type { ReadStore, Scalar } from '../../src/readstore/readStore.js';
import { findPage, type Page } from '../shared/page.js';

export type ConsentEventView = Omit<ConsentEventDoc, '_id' | 'tenant_id' | 'user_id'>;

export const toConsentEventView = ({ _id, tenant_id: _t, user_id: _u, ...rest }: ConsentEventDoc): ConsentEventView => rest;

/** GET /v1/users/{id}/consents/history: newest first (spec "Providers and connections"). */
export async function listConsentHistory(readStore: ReadStore, userId: string, page: { after: readonly Scalar[] | null; limit: number }): Promise<Page<ConsentEventDoc>> {
  return findPage<ConsentEventDoc>(readStore, CONSENT_EVENTS, { filter: { user_id: userId }, sort: [['id', -1]] }, page);
}

export async function findConsentState(readStore: ReadStore, stateHash: string): Promise<ConsentStateDoc | null> {
  return readStore.get<ConsentStateDoc>(CONSENT_STATES, stateHash);
}
