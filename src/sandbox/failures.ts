/**
 * How the sandbox can be told to fail, per provider, for the next `times` calls to its token or
 * data endpoints: a refused grant (`invalid_grant`, 401 on data), a rate limit (429 with
 * Retry-After), a server error (5xx) or a time-out (the answer never comes), and a revoked
 * consent (every token of the provider stops working until the user consents again).
 */
export type FailureKind = 'invalid_grant' | 'rate_limited' | 'server_error' | 'timeout';
export type Failure = { kind: FailureKind; times: number; retryAfterSeconds: number };

export class FailurePlan {
  private readonly plans = new Map<string, Failure>();

  fail(provider: string, kind: FailureKind, options: { times?: number; retryAfterSeconds?: number } = {}): void {
    this.plans.set(provider, { kind, times: options.times ?? 1, retryAfterSeconds: options.retryAfterSeconds ?? 60 });
  }

  clear(provider?: string): void {
    if (provider) this.plans.delete(provider);
    else this.plans.clear();
  }

  /** The failure this call must show, counting it down; null when the call succeeds. */
  take(provider: string): Failure | null {
    const plan = this.plans.get(provider);
    if (!plan) return null;
    if (--plan.times <= 0) this.plans.delete(provider);
    return plan;
  }
}
