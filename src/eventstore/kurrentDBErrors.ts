import { ErrorType } from '@kurrent/kurrentdb-client';

/** The client's error kind, by its `type` tag rather than instanceof, which a second copy of the client would break. */
export function errorType(err: unknown): string | undefined {
  const type = err instanceof Error ? (err as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : undefined;
}

/** Reads of $all refused for want of rights, said in the words an operator acts on. */
export class EventStoreAccessError extends Error {
  readonly code = 'EVENTSTORE_ACCESS_DENIED';
  constructor(cause: unknown) {
    super(
      'KurrentDB refused to let this service read $all (wrong credentials, or a user without the right). ' +
        'Connect as a user in the $admins group (reads of the secondary indexes need it), or grant the ' +
        "user read on $all (the $acl of the stream $$all's metadata) and membership of $ops (scavenges for erasure); " +
        'put the credentials in EVENTSTORE_URL (kurrentdb://user:password@host:2113?tls=true).',
      { cause },
    );
    this.name = 'EventStoreAccessError';
  }
}

export function translateAccessError(err: unknown): unknown {
  return errorType(err) === ErrorType.ACCESS_DENIED ? new EventStoreAccessError(err) : err;
}

/** Failures that say nothing about the request itself: the connection, the deadline, the leader. */
export function isTransportError(err: unknown): boolean {
  const type = errorType(err);
  return (
    type === ErrorType.UNAVAILABLE ||
    type === ErrorType.DEADLINE_EXCEEDED ||
    type === ErrorType.CANCELLED ||
    type === ErrorType.TIMEOUT ||
    type === ErrorType.NOT_LEADER
  );
}
