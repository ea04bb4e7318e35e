import type { PullContext } from './pullConnector.js';

/**
 * Which of a provider's data types a pull asks for: the one a notification named (or all), and
 * only those the grant covers. Providers answer 401 for a collection outside the grant, which
 * the sync engine would take for a withdrawn consent. A grant whose scopes are unknown (the token
 * answer named none) asks for all.
 */
export const wantedType = (ctx: PullContext, dataType: string): boolean => ctx.dataType === null || ctx.dataType === dataType;

/** `scope` may list the several names a provider gives one grant (Oura: `spo2` and `spo2Daily`). */
export const grantedScope = (ctx: PullContext, scope: string | readonly string[]): boolean =>
  ctx.scopes.length === 0 || (typeof scope === 'string' ? [scope] : scope).some((s) => ctx.scopes.includes(s));

export const pulls = (ctx: PullContext, dataType: string, scope: string | readonly string[]): boolean => wantedType(ctx, dataType) && grantedScope(ctx, scope);
