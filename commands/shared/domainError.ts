/**
 * A decision refused for a reason the caller can act on. `code` maps to an HTTP status at the
 * edge (src/server/problems.ts); nothing in commands/ knows about HTTP.
 */
export type DomainErrorCode = 'not_found' | 'conflict' | 'gone' | 'invalid' | 'forbidden' | 'unprocessable';

export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
  }
}
