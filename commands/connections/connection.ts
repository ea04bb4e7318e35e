import type { Event } from '../../src/eventstore/eventStore.js';
import type { ConsentCategory } from '../../src/catalog/providerFacts.js';
import type { StreamState } from '../shared/commandHandler.js';
import type { Snapshots } from '../shared/streamSnapshots.js';

/**
 * One user's connection to one provider (spec "Connection" and its state table): one stream per
 * user and provider, holding the consent requests (single-use states, 10 minutes), the grants,
 * the consent events auditors replay (one per category, with actor and evidence), refusals that
 * need the user again, and disconnections. Tokens and PKCE verifiers are sealed before they reach
 * an event (src/crypto/sealedValue.ts; owner `<user>:<provider>`).
 */
type Base = { tenant_id: string; user_id: string; provider: string };

export type ConsentRequested = Event<
  'connection.consent_requested',
  Base & {
    state_hash: string;
    redirect_uri: string | null;
    verifier_sealed: string | null;
    expires_at: string;
    at: string;
    by: string;
    /** The browser the state is bound to from the start (the hosted page's button); absent: bound when authorize_url is first opened. */
    browser_hash?: string | null;
  }
>;
/**
 * The browser that first opened authorize_url (RFC 6749 §10.12): only a callback carrying that
 * browser's cookie may complete the state. The hash of the cookie's random value, never the value.
 */
export type ConsentBound = Event<'connection.consent_bound', Base & { state_hash: string; browser_hash: string; at: string }>;
export type ConnectionEstablished = Event<
  'connection.established',
  Base & {
    state_hash: string;
    scopes: string[];
    categories: ConsentCategory[];
    application: string;
    tokens_sealed: string;
    reconnect: boolean;
    at: string;
    by: string;
    /** The provider's id of the user (Garmin's userId), when known: pushes name the user by it. */
    provider_user_id?: string;
  }
>;
export type ConsentFailed = Event<'connection.consent_failed', Base & { state_hash: string; error: string; at: string }>;
export type ConsentChanged = Event<
  'consent.granted' | 'consent.revoked',
  Base & { category: ConsentCategory; actor_id: string; evidence: string; at: string }
>;
/** Written on the stream before issue 26; refreshed tokens now overwrite the connection's credentials record (connectionCredentials.ts). */
export type TokensRefreshed = Event<'connection.tokens_refreshed', Base & { tokens_sealed: string; at: string }>;
/** The same tokens sealed again under the current SEALING_KEY (`datakeys reseal`, a rotation's second half). */
export type TokensResealed = Event<'connection.tokens_resealed', Base & { tokens_sealed: string; at: string }>;
export type ConnectionNeedsReauth = Event<'connection.needs_reauth', Base & { reason: string; error: string | null; at: string }>;
export type ConnectionDisconnected = Event<'connection.disconnected', Base & { reason: string; at: string; by: string }>;

/** A provider erasure removed the disconnected connection (spec "Credentials and users"); consent events stay with the user. */
export type ConnectionErased = Event<'connection.erased', Base & { job_id: string | null; at: string }>;

export type ConnectionEvent =
  | ConsentRequested
  | ConsentBound
  | ConnectionEstablished
  | ConsentFailed
  | ConsentChanged
  | TokensRefreshed
  | TokensResealed
  | ConnectionNeedsReauth
  | ConnectionDisconnected
  | ConnectionErased;

export const connectionStream = (userId: string, provider: string) => `connection-${userId}-${provider}`;
export const TOKEN_PURPOSE = 'provider token v1';
export const VERIFIER_PURPOSE = 'pkce verifier v1';
export const connectionOwner = (userId: string, provider: string) => `${userId}:${provider}`;
export const CONSENT_STATE_TTL_MS = 10 * 60 * 1000;

export type ConnectionStatus = 'none' | 'active' | 'needs_reauth' | 'disconnected';
export type PendingConsent = { redirectUri: string | null; verifierSealed: string | null; expiresAt: string; by: string; browserHash: string | null };

export type ConnectionState = {
  status: ConnectionStatus;
  tenantId: string | null;
  categories: ConsentCategory[];
  application: string | null;
  /** The consent state that established the current grant: names it in the credentials record (connectionCredentials.ts). */
  grant: string | null;
  /** The tokens the grant's event carried (resealed, or refreshed on the stream before issue 26); the credentials record holds newer ones. */
  tokensSealed: string | null;
  pending: Record<string, PendingConsent>;
};

/**
 * A snapshot of the connection (commands/shared/streamSnapshots.ts): its stream grows with every
 * consent request (and, before issue 26, every token refresh), and pulls read it. The tokens and
 * the pending states (their redirects, sealed verifiers) are sealed under the user's profile key.
 */
export type ConnectionSnapshot = Event<
  'snapshot.connection',
  Base & {
    status: ConnectionStatus;
    categories: ConsentCategory[];
    application: string | null;
    grant: string | null;
    tokens_sealed: string | null;
    pending: Record<string, PendingConsent>;
    snapshot_version: number;
    revision: number;
  }
>;

const connectionSnapshots: Snapshots<ConnectionState> = {
  type: 'snapshot.connection',
  version: 1,
  every: 1000,
  encode: (state, streamName) => {
    if (state.tenantId === null) return null;
    // connection-<user uuid>-<provider slug>
    const rest = streamName.slice('connection-'.length);
    return {
      tenant_id: state.tenantId,
      user_id: rest.slice(0, 36),
      provider: rest.slice(37),
      status: state.status,
      categories: state.categories,
      application: state.application,
      grant: state.grant,
      tokens_sealed: state.tokensSealed,
      pending: state.pending,
    };
  },
  decode: (d) => ({
    status: d.status as ConnectionStatus,
    tenantId: d.tenant_id as string,
    categories: d.categories as ConsentCategory[],
    application: (d.application as string | null) ?? null,
    grant: (d.grant as string | null) ?? null,
    tokensSealed: (d.tokens_sealed as string | null) ?? null,
    pending: (d.pending as Record<string, PendingConsent> | null) ?? {},
  }),
};

export const connectionState: StreamState<ConnectionState, ConnectionEvent> = {
  snapshots: connectionSnapshots,
  initialState: () => ({ status: 'none', tenantId: null, categories: [], application: null, grant: null, tokensSealed: null, pending: {} }),
  evolve: (state, event) => {
    const d = event.data;
    switch (event.type) {
      case 'connection.consent_requested':
        return {
          ...state,
          tenantId: d.tenant_id,
          // States expired by the time of this request are forgotten (retention): the map holds ten minutes of requests at most.
          pending: {
            ...unexpired(state.pending, event.data.at),
            [event.data.state_hash]: {
              redirectUri: event.data.redirect_uri,
              verifierSealed: event.data.verifier_sealed,
              expiresAt: event.data.expires_at,
              by: event.data.by,
              browserHash: event.data.browser_hash ?? null,
            },
          },
        };
      case 'connection.consent_bound': {
        const pending = state.pending[event.data.state_hash];
        return pending ? { ...state, pending: { ...state.pending, [event.data.state_hash]: { ...pending, browserHash: event.data.browser_hash } } } : state;
      }
      case 'connection.established':
        return { ...state, status: 'active', tenantId: d.tenant_id, categories: event.data.categories, application: event.data.application, grant: event.data.state_hash, tokensSealed: event.data.tokens_sealed, pending: without(state.pending, event.data.state_hash) };
      case 'connection.consent_failed':
        return { ...state, pending: without(state.pending, event.data.state_hash) };
      case 'connection.tokens_refreshed':
      case 'connection.tokens_resealed':
        return { ...state, tokensSealed: event.data.tokens_sealed };
      case 'connection.needs_reauth':
        return { ...state, status: 'needs_reauth' };
      // A grant's categories also change alone (the user narrowed the permissions at the provider).
      case 'consent.granted':
        return state.categories.includes(event.data.category) ? state : { ...state, categories: [...state.categories, event.data.category].sort() };
      case 'consent.revoked':
        return { ...state, categories: state.categories.filter((c) => c !== event.data.category) };
      case 'connection.disconnected':
        return { ...state, status: 'disconnected', categories: [], grant: null, tokensSealed: null };
      case 'connection.erased':
        return { ...state, status: 'none', pending: {} };
      default:
        return state;
    }
  },
};

function unexpired(pending: Record<string, PendingConsent>, at: string): Record<string, PendingConsent> {
  const now = Date.parse(at);
  const live = Object.entries(pending).filter(([, p]) => Date.parse(p.expiresAt) > now);
  return live.length === Object.keys(pending).length ? pending : Object.fromEntries(live);
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  const { [key]: _gone, ...rest } = record;
  return rest;
}

/** A connection that holds a grant: erasing its provider is a 409 and it counts as connected. */
export const holdsGrant = (status: ConnectionStatus) => status === 'active' || status === 'needs_reauth';
