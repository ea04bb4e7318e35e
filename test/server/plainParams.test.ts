import { validatorCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { plainParamsValidatorCompiler } from '../../src/server/plainParams.js';

/** Issue 27: path parameters declared as plain strings skip zod; every other schema keeps zod's answers, errors included. */
const compile = (schema: unknown, httpPart = 'params') => plainParamsValidatorCompiler({ schema, method: 'GET', url: '/x/:id', httpPart } as never);
const zodOf = (schema: unknown, httpPart = 'params') => validatorCompiler({ schema, method: 'GET', url: '/x/:id', httpPart } as never);

describe('plain string path parameters (issue 27)', () => {
  it('accepts the router’s strings as zod would, for plain strings with a description and an admin mirror’s added tenant_id', () => {
    const plain = z.object({ id: z.string().describe('User id') }).extend({ tenant_id: z.string() });
    const params = { id: 'abc', tenant_id: 't' };
    expect(compile(plain)(params)).toEqual(zodOf(plain)(params));
  });

  it.each([
    ['a string with checks', z.object({ id: z.string().min(5) })],
    ['a uuid format', z.object({ id: z.uuid() })],
    ['an enum', z.object({ id: z.enum(['x']) })],
  ])('answers exactly zod’s error for %s', (_what, schema) => {
    expect(compile(schema)({ id: 'abc' })).toEqual(zodOf(schema)({ id: 'abc' }));
    expect(compile(schema)({ id: 'abc' })).toHaveProperty('error');
  });

  it('falls back to zod when a declared parameter is missing, and leaves other parts of the request to zod', () => {
    const plain = z.object({ id: z.string(), other: z.string() });
    expect(compile(plain)({ id: 'abc' })).toEqual(zodOf(plain)({ id: 'abc' }));
    expect(compile(plain)({ id: 'abc' })).toHaveProperty('error');
    const query = z.object({ q: z.string() });
    expect(compile(query, 'querystring')({ q: 1 })).toEqual(zodOf(query, 'querystring')({ q: 1 }));
    expect(compile(query, 'querystring')({ q: 1 })).toHaveProperty('error');
  });
});
