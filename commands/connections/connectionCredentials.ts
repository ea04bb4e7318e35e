import { DataKeyDestroyedError, type DataKeys } from '../../src/crypto/dataKeys.js';
import { openJson, PayloadCipherError, sealJson, type SealedJson } from '../../src/crypto/payloadCipher.js';
import { profileKeyRef } from '../../src/crypto/personalSealing.js';
import type { CollectionSpec, ReadStore } from '../../src/readstore/readStore.js';
import { connectionStream, type ConnectionState } from './connection.js';

/**
 * A connection's OAuth tokens as technical state (issue 26): one record per connection that a
 * token refresh overwrites, beside the connection stream rather than on it, so a refresh during a
 * pull and a consent callback never contend for one stream revision. The stream keeps the
 * business facts (connected with the grant's first tokens, re-authorised, disconnected); the
 * record holds the tokens of the stream's current grant as refreshed since.
 *
 * The record names its grant (the consent state that established it) and a `version` that every
 * write raises by one, conditional on the version read (`ReadStore.updateIf`, one atomic write on
 * both backends): of two refreshers, one stores and the other reads the winner's tokens. A
 * reader uses the record only while it names the stream's grant; otherwise (no record yet, a
 * crash between a reconnect's append and its record write) the tokens the grant's event carried,
 * which the next refresh replaces.
 *
 * The tokens are sealed twice: under SEALING_KEY as before (`tokens_sealed`, src/crypto/
 * sealedValue.ts), and that under the user's profile key (src/crypto/personalSealing.ts), so
 * the record reads as nothing once the user is deleted (crypto-shredding, docs/erasure.md).
 */
export const CREDENTIALS = 'connection_credentials';
export const CREDENTIALS_SPEC: CollectionSpec = { name: CREDENTIALS, indexes: [{ fields: [['user_id', 1]] }] };

export type CredentialsDoc = {
  _id: string;
  tenant_id: string;
  user_id: string;
  provider: string;
  grant: string;
  version: number;
  tokens: SealedJson;
  updated_at: string;
};

/** The connection's tokens now, sealed under SEALING_KEY, and the record's version a write must find (null: no record). */
export type CurrentCredentials = { tokensSealed: string; version: number | null; fromRecord: boolean };

export type CredentialsOwner = { tenantId: string; userId: string; provider: string };

const aadOf = (userId: string, provider: string, grant: string) => `credentials\u0000${userId}\u0000${provider}\u0000${grant}`;
/** A reconnect's record write gives up after this many lost races (each with a write that moved on); readers then use its event. */
const REPLACE_ROUNDS = 5;

/** Creates the collection (it belongs to no projection): once at start-up, before any credentials are read. */
export async function ensureCredentialsCollection(readStore: ReadStore): Promise<void> {
  await readStore.ensureCollections([CREDENTIALS_SPEC]);
}

export class ConnectionCredentials {
  constructor(
    private readonly readStore: ReadStore,
    private readonly dataKeys: DataKeys,
  ) {}

  private get(userId: string, provider: string): Promise<CredentialsDoc | null> {
    return this.readStore.get<CredentialsDoc>(CREDENTIALS, connectionStream(userId, provider));
  }

  /**
   * The tokens of the connection's current grant (`state` folded from its stream), or null when
   * it holds none or they no longer open (the user's profile key destroyed).
   */
  async current(userId: string, provider: string, state: Pick<ConnectionState, 'grant' | 'tokensSealed'>): Promise<CurrentCredentials | null> {
    if (!state.grant || !state.tokensSealed) return null;
    const doc = await this.get(userId, provider);
    if (doc && doc.grant === state.grant) {
      const opened = await this.open(doc);
      return opened === null ? null : { tokensSealed: opened, version: doc.version, fromRecord: true };
    }
    return { tokensSealed: state.tokensSealed, version: doc?.version ?? null, fromRecord: false };
  }

  /**
   * Stores the tokens of `grant` if the record is still at version `seen` (null: there is none).
   * Answers whether it wrote: false when another writer moved the record first (its tokens are
   * newer), or the user is deleted.
   */
  async store(owner: CredentialsOwner, grant: string, tokensSealed: string, seen: number | null, at: Date): Promise<boolean> {
    let tokens: SealedJson;
    try {
      const key = await this.dataKeys.issue(profileKeyRef(owner.userId), owner.tenantId, at);
      tokens = sealJson(key.key, key.keyId, JSON.stringify(tokensSealed), aadOf(owner.userId, owner.provider, grant));
    } catch (err) {
      if (err instanceof DataKeyDestroyedError) return false;
      throw err;
    }
    const id = connectionStream(owner.userId, owner.provider);
    const fields = { tenant_id: owner.tenantId, user_id: owner.userId, provider: owner.provider, grant, tokens, updated_at: at.toISOString() };
    if (seen !== null) return this.readStore.updateIf(CREDENTIALS, id, { version: seen }, { ...fields, version: seen + 1 });
    // No record yet: inserted only if still absent (setOnInsert), then read back to learn whose insert won.
    await this.readStore.applyChanges([{ op: 'update', collection: CREDENTIALS, id, upsert: true, setOnInsert: { ...fields, version: 1 } }]);
    const stored = await this.readStore.get<CredentialsDoc>(CREDENTIALS, id);
    return stored?.version === 1 && stored.tokens.iv === tokens.iv && stored.tokens.data === tokens.data;
  }

  /**
   * A new grant's tokens (a consent completed, appended first): written over whatever the record
   * holds, racing refreshes of the old grant. Left to the grant's event after REPLACE_ROUNDS lost
   * races or once a refresh of this grant stored newer tokens.
   */
  async replace(owner: CredentialsOwner, grant: string, tokensSealed: string, at: Date): Promise<void> {
    for (let round = 0; round < REPLACE_ROUNDS; round++) {
      const doc = await this.get(owner.userId, owner.provider);
      if (doc?.grant === grant) return;
      if (await this.store(owner, grant, tokensSealed, doc?.version ?? null, at)) return;
    }
  }

  /** A disconnected connection's record goes (a late refresh finding none writes nothing it could use: no grant names it). */
  async remove(userId: string, provider: string): Promise<void> {
    await this.readStore.applyChanges([{ op: 'delete', collection: CREDENTIALS, id: connectionStream(userId, provider) }]);
  }

  /** Every record of a deleted user (already unreadable: its profile key is destroyed). */
  async removeUser(userId: string): Promise<void> {
    await this.readStore.applyChanges([{ op: 'deleteMany', collection: CREDENTIALS, filter: { user_id: userId } }]);
  }

  private async open(doc: CredentialsDoc): Promise<string | null> {
    const key = await this.dataKeys.get(doc.tokens.key);
    if (!key) return null;
    try {
      return JSON.parse(openJson(key, doc.tokens, aadOf(doc.user_id, doc.provider, doc.grant))) as string;
    } catch (err) {
      if (err instanceof PayloadCipherError) return null;
      throw err;
    }
  }
}
