import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** Spec "Conventions" 3: a caller's valid X-Request-Id is kept; anything else is replaced. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && VALID.test(given) ? given : randomUUID();
}
