import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { ForbiddenAddressError } from '../../shared/addressPolicy.js';
import { parseRetryAfter } from '../../shared/retryAfter.js';

/** Contracts §5: an answer within 15 s is what counts. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** Spec "Webhook delivery": the first 1 KiB of the answer is kept with the attempt. */
export const EXCERPT_BYTES = 1024;
/** Read at most this much of an answer (to keep the connection); a longer one is cut off. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export type AttemptResult = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  excerpt: string | null;
  durationMs: number;
  /** Seconds the receiver asked to wait (Retry-After on 429 or 503), when it said so. */
  retryAfterSeconds: number | null;
};

/**
 * One attempt: POST the body with the signature headers, no redirects followed (undici's request
 * does not follow them; a 3xx is a failed attempt), the answer read up to a bound.
 */
export async function postDelivery(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  now: () => number = Date.now,
  /** Aborts the request from outside (the engine lost its lease). */
  cut?: AbortSignal,
): Promise<AttemptResult> {
  const started = now();
  // One controller and one timer per attempt: AbortSignal.timeout and AbortSignal.any cost several
  // times as much each (weak references kept per signal), and every delivery pays them.
  const attempt = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    attempt.abort();
  }, ATTEMPT_TIMEOUT_MS);
  const onCut = () => attempt.abort();
  if (cut?.aborted) attempt.abort();
  else cut?.addEventListener('abort', onCut, { once: true });
  const signal = attempt.signal;
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher,
      signal,
      headers: { 'content-type': 'application/json', 'user-agent': 'wellstream-webhooks/1', ...headers },
      body,
    });
    const excerpt = await readBounded(res.body);
    const code = res.statusCode;
    const ok = code >= 200 && code < 300;
    return {
      ok,
      statusCode: code,
      error: ok ? null : `receiver answered ${code}`,
      excerpt,
      durationMs: Math.max(0, Math.round(now() - started)),
      retryAfterSeconds: code === 429 || code === 503 ? parseRetryAfter(res.headers['retry-after'], now()) : null,
    };
  } catch (err) {
    return { ok: false, statusCode: null, error: describe(err, timedOut), excerpt: null, durationMs: Math.max(0, Math.round(now() - started)), retryAfterSeconds: null };
  } finally {
    clearTimeout(timer);
    cut?.removeEventListener('abort', onCut);
  }
}

async function readBounded(body: Dispatcher.ResponseData['body']): Promise<string> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  for await (const chunk of body) {
    const buf = chunk as Buffer;
    total += buf.length;
    if (keptBytes < EXCERPT_BYTES) {
      const part = buf.subarray(0, EXCERPT_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (total > MAX_ANSWER_BYTES) {
      body.destroy();
      break;
    }
  }
  // A multi-byte character cut at the boundary decodes to U+FFFD, never to an invalid string.
  return Buffer.concat(kept).toString('utf8');
}

function describe(err: unknown, timedOut: boolean): string {
  if (timedOut) return `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`;
  const e = err as (Error & { code?: string; cause?: unknown }) | undefined;
  const cause = (e?.cause ?? e) as Error & { code?: string };
  if (cause instanceof ForbiddenAddressError || e instanceof ForbiddenAddressError) return (cause instanceof ForbiddenAddressError ? cause : e!).message;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND' || cause?.code === 'EAI_AGAIN') return 'host name not resolved';
  if (cause?.code) return `${cause.code}: ${cause.message}`.slice(0, 500);
  return String(e?.message ?? err).slice(0, 500);
}
