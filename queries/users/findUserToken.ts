import type { ReadStore } from '../../src/readstore/readStore.js';
import type { UserTokenDoc } from '../../projections/users/usersProjection.js';

export function findUserTokenByHash(readStore: ReadStore, tokenHash: string) {
  return readStore.get<UserTokenDoc>('user_tokens', tokenHash);
}
