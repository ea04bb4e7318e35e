/**
 * Why a request could not reach its address, in words a person can act on ("connect ECONNREFUSED
 * 127.0.0.1:8080"), or null when the error is not a failure to reach it. fetch (undici) throws a
 * bare "fetch failed" with the socket's error as its `cause`, sometimes a level or two down, so
 * the chain is followed (a few steps: a cause chain is the caller's object).
 */
export function unreachableReason(err: unknown): string | null {
  let e: unknown = err;
  let fetchFailed = false;
  let below: string | null = null;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^(E[A-Z_]+|UND_ERR_[A-Z_]+)$/.test(code)) return e.message.includes(code) ? e.message : `${code} ${e.message}`.trim();
    if (e.message === 'fetch failed') fetchFailed = true;
    // A cause without a code (fetch's own refusals, e.g. "bad port") still says more than "fetch failed".
    else if (fetchFailed && below === null) below = e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return fetchFailed ? (below ?? 'fetch failed') : null;
}
