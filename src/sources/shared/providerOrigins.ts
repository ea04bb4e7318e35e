import { ProviderCallError } from './providerCallError.js';
import type { ProviderDescriptor } from './providerDescriptor.js';

/**
 * Where the service may call a provider (issue 20, finding 3): the origins its documentation
 * gives, or, when `<SLUG>_BASE_URL` is set, that one origin instead (contracts §7). Every address
 * a call goes to is checked here, whether the code built it from a documented path or took it
 * from the provider's own answer (Fitbit `pagination.next`, Polar `resource-uri`): an address on
 * any other origin (another host, another port, `http:` for `https:`) is refused as `rejected`
 * before a connection is made, so the user's token never leaves for a host the code did not name.
 */
export class ProviderOrigins {
  private readonly documented: ReadonlySet<string>;
  /** The configured `<SLUG>_BASE_URL` origin, when set. */
  readonly configured: string | null;

  constructor(
    private readonly provider: Pick<ProviderDescriptor, 'name'>,
    documented: readonly string[],
    baseUrl: string | undefined,
  ) {
    this.documented = new Set(documented.map((o) => new URL(o).origin));
    this.configured = baseUrl ? new URL(baseUrl).origin : null;
  }

  /** A documented path on one of the documented origins (or on the configured one). */
  at(documentedOrigin: string, path: string): URL {
    const url = new URL(path, (this.configured ?? new URL(documentedOrigin).origin) + '/');
    this.check(url);
    return url;
  }

  /**
   * An address the provider answered with. One on a documented origin keeps its path and query
   * and moves to the configured origin when one is set (the sandbox answers with the real
   * provider's addresses); one already on the configured origin stays; anything else is refused.
   */
  follow(link: string): URL {
    if (!URL.canParse(link)) throw new ProviderCallError('rejected', `${this.provider.name} answered a link that is not an absolute address; not followed`);
    const named = new URL(link);
    const origin = this.documented.has(named.origin) ? (this.configured ?? named.origin) : named.origin === this.configured ? named.origin : null;
    if (origin === null) throw this.refusal(named);
    // Rebuilt from the parts the service keeps: no user-info, no fragment.
    const url = new URL(origin);
    url.pathname = named.pathname;
    url.search = named.search;
    this.check(url);
    return url;
  }

  /** Throws `rejected` unless the address is on an origin calls may go to. */
  check(url: URL): void {
    const allowed = this.configured ? url.origin === this.configured : this.documented.has(url.origin);
    if (!allowed || url.username || url.password) throw this.refusal(url);
  }

  private refusal(url: URL): ProviderCallError {
    const where = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : `a ${url.protocol} address`;
    return new ProviderCallError('rejected', `${this.provider.name} named ${where}, which is not one of its documented addresses${this.configured ? ' nor its configured base URL' : ''}; not called`);
  }
}
