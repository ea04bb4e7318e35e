import { connectionOwner, connectionState, connectionStream, TOKEN_PURPOSE } from '../../../commands/connections/connection.js';
import type { ConnectionCredentials } from '../../../commands/connections/connectionCredentials.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { openValue, sealValue, type ValueSealer } from '../../crypto/sealedValue.js';
import type { EventStore } from '../../eventstore/eventStore.js';
import type { OAuthClient, TokenSet } from '../../../commands/connections/providerGrants.js';
import { ProviderCallError, refreshTokens } from '../../sources/shared/oauthClient.js';
import type { ProviderDescriptor } from '../../sources/shared/providerDescriptor.js';

/** Tokens are refreshed this long before they expire, so no call of a pull goes out with an expired one. */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** Thrown when the connection holds no usable grant any more (disconnected, or needs the user again). */
export class NoGrantError extends Error {
  override name = 'NoGrantError';
  constructor(readonly status: string) {
    super(`the connection is ${status}`);
  }
}

/**
 * A connection's tokens during a pull: the grant read from the connection stream, its tokens from
 * the connection's credentials record (sealed, commands/connections/connectionCredentials.ts),
 * refreshed before expiry, and the refreshed ones written over the record (conditional on the
 * version read) so every process uses them next; nothing is appended to the connection stream,
 * so a consent callback meanwhile never finds its revision moved (issue 26). When another
 * process refreshed first (a rotating refresh token is then spent), its tokens are taken
 * instead of failing.
 */
export class ConnectionTokens {
  private tokens: TokenSet | null = null;
  private sealed: string | null = null;
  private held: { tenantId: string; grant: string; version: number | null } | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly o: {
      eventStore: EventStore;
      credentials: ConnectionCredentials;
      sealer: ValueSealer;
      provider: ProviderDescriptor;
      client: OAuthClient;
      userId: string;
      now: () => Date;
    },
  ) {}

  private get owner() {
    return connectionOwner(this.o.userId, this.o.provider.slug);
  }

  /** Opens the tokens the connection holds now. */
  async load(): Promise<TokenSet> {
    const { state } = await loadState(this.o.eventStore, connectionStream(this.o.userId, this.o.provider.slug), connectionState);
    const current = state.status === 'active' && state.tenantId ? await this.o.credentials.current(this.o.userId, this.o.provider.slug, state) : null;
    if (!current) throw new NoGrantError(state.status);
    this.held = { tenantId: state.tenantId!, grant: state.grant!, version: current.version };
    if (current.tokensSealed !== this.sealed) {
      this.tokens = JSON.parse(openValue(this.o.sealer, TOKEN_PURPOSE, this.owner, current.tokensSealed)) as TokenSet;
      this.sealed = current.tokensSealed;
    }
    return this.tokens!;
  }

  /** The grant whose tokens this pull holds (null before `load`): a refusal of them says nothing of a grant made since. */
  grant(): string | null {
    return this.held?.grant ?? null;
  }

  /** The provider's id of the user, when the token answer named one. */
  providerUserId(): string | null {
    const t = this.tokens as (TokenSet & { providerUserId?: unknown }) | null;
    return typeof t?.providerUserId === 'string' ? t.providerUserId : null;
  }

  /** The access token to call with now, refreshed first when it expires within REFRESH_AHEAD_MS. */
  async accessToken(): Promise<string> {
    const t = this.tokens ?? (await this.load());
    if (t.refreshToken && t.expiresAt && Date.parse(t.expiresAt) - this.o.now().getTime() <= REFRESH_AHEAD_MS) {
      this.refreshing ??= this.refresh().finally(() => (this.refreshing = null));
      await this.refreshing;
    }
    return this.tokens!.accessToken;
  }

  private async refresh(): Promise<void> {
    const before = this.sealed;
    let fresh: TokenSet;
    try {
      fresh = await refreshTokens(this.o.provider, this.o.client, this.tokens!.refreshToken!, this.o.now());
    } catch (err) {
      // Another process may have refreshed (and spent the refresh token) meanwhile: use its tokens.
      if (err instanceof ProviderCallError && err.kind === 'refused') {
        await this.load();
        if (this.sealed !== before) return;
      }
      throw err;
    }
    const kept: TokenSet = { ...this.tokens!, ...fresh, refreshToken: fresh.refreshToken ?? this.tokens!.refreshToken, scope: fresh.scope ?? this.tokens!.scope };
    const sealed = sealValue(this.o.sealer, TOKEN_PURPOSE, this.owner, JSON.stringify(kept));
    const held = this.held!;
    // Refreshed elsewhere (or reconnected) since this pull read the record: the write is refused, theirs are newer.
    const stored = await this.o.credentials.store({ tenantId: held.tenantId, userId: this.o.userId, provider: this.o.provider.slug }, held.grant, sealed, held.version, this.o.now());
    if (stored) {
      this.tokens = kept;
      this.sealed = sealed;
      this.held = { ...held, version: (held.version ?? 0) + 1 };
    } else await this.load();
  }
}
