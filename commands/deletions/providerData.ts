import { StreamDeletedError, type Event, type EventStore, type RecordedEvent } from '../../src/eventstore/eventStore.js';
import type { StreamState } from '../shared/commandHandler.js';

/**
 * The ledger of one user's data from one provider (`providerdata-<user>-<provider>`): every upload
 * (and, with connections, every pull) that writes data registers here first, and an erasure of the
 * provider's data is requested and finished here. Both append at the revision they read, so the
 * event store's concurrency check decides which came first:
 * - a registration that loses to an erasure request finds the ledger erasing and is refused
 *   (spec "Provider erasure": uploads refused with 409 while the job runs);
 * - an erasure sees every registration that came before it, so nothing it should erase escapes.
 * Deleting the user tombstones the ledger (at the revision it read): later registrations fail.
 *
 * The data of each `generation` is sealed with its own data key (src/crypto/dataKeys.ts); a
 * finished erasure moves the ledger to the next generation, so new data is accepted normally
 * afterwards and nothing it writes is sealed with the destroyed key.
 *
 * Every event carries the generation and the ledger's status after it, so writers read only the
 * last event (`loadProviderDataHead`); an erasure reads the whole ledger.
 */
export const providerDataStream = (userId: string, provider: string) => `providerdata-${userId}-${provider}`;

type Base = { user_id: string; tenant_id: string; provider: string; generation: number };

export type ProviderUploadRegistered = Event<'provider_data.upload_registered', Base & { upload_stream: string; at: string }>;
export type ProviderErasureRequested = Event<'provider_data.erasure_requested', Base & { job_id: string; requested_at: string }>;
/** `generation` is the one erased; the ledger continues with the next. */
export type ProviderErasureFinished = Event<'provider_data.erasure_finished', Base & { job_id: string; status: 'done' | 'failed'; finished_at: string }>;
export type ProviderDataEvent = ProviderUploadRegistered | ProviderErasureRequested | ProviderErasureFinished;

export type ProviderDataHead = {
  /** The generation new data goes to (or, while erasing, the one being erased). */
  generation: number;
  /** The job erasing the provider's data now, if any. */
  erasingJob: string | null;
  /** Revision of the last event; null for a ledger not yet written. */
  revision: number | null;
  /** The user was deleted: the ledger is tombstoned and takes nothing any more. */
  closed: boolean;
};

export type ProviderDataState = ProviderDataHead & {
  /** Upload streams registered, in every generation. */
  uploads: string[];
  finishedJobs: Record<string, 'done' | 'failed'>;
};

export const headAfter = (event: RecordedEvent<ProviderDataEvent> | undefined): Omit<ProviderDataHead, 'closed'> => {
  if (!event) return { generation: 0, erasingJob: null, revision: null };
  const d = event.data;
  switch (event.type) {
    case 'provider_data.upload_registered':
      return { generation: d.generation, erasingJob: null, revision: event.streamRevision };
    case 'provider_data.erasure_requested':
      return { generation: d.generation, erasingJob: event.data.job_id, revision: event.streamRevision };
    case 'provider_data.erasure_finished':
      return { generation: d.generation + 1, erasingJob: null, revision: event.streamRevision };
  }
};

export const providerDataState: StreamState<ProviderDataState, ProviderDataEvent> = {
  initialState: () => ({ generation: 0, erasingJob: null, revision: null, closed: false, uploads: [], finishedJobs: {} }),
  evolve: (state, event) => {
    const head = headAfter(event);
    switch (event.type) {
      case 'provider_data.upload_registered':
        return { ...state, ...head, uploads: state.uploads.includes(event.data.upload_stream) ? state.uploads : [...state.uploads, event.data.upload_stream] };
      case 'provider_data.erasure_requested':
        return { ...state, ...head };
      case 'provider_data.erasure_finished':
        return { ...state, ...head, finishedJobs: { ...state.finishedJobs, [event.data.job_id]: event.data.status } };
    }
  },
};

/** The ledger's head from its last event only: what every upload reads. */
export async function loadProviderDataHead(eventStore: EventStore, userId: string, provider: string): Promise<ProviderDataHead> {
  try {
    const [last] = (await eventStore.readStream(providerDataStream(userId, provider), { direction: 'backwards', maxCount: 1 })) as RecordedEvent<ProviderDataEvent>[];
    return { ...headAfter(last), closed: false };
  } catch (err) {
    if (err instanceof StreamDeletedError) return { generation: 0, erasingJob: null, revision: null, closed: true };
    throw err;
  }
}

/** The whole ledger (an erasure enumerates what it registered). */
export async function loadProviderData(eventStore: EventStore, userId: string, provider: string): Promise<ProviderDataState> {
  let state = providerDataState.initialState();
  try {
    const events = (await eventStore.readStream(providerDataStream(userId, provider))) as RecordedEvent<ProviderDataEvent>[];
    for (const e of events) state = providerDataState.evolve(state, e);
  } catch (err) {
    if (!(err instanceof StreamDeletedError)) throw err;
    state = { ...state, closed: true };
  }
  return state;
}
