import fastJsonStringify from 'fast-json-stringify';
import { serializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

/**
 * The tests' oracle of a route's answer bytes: a serializer compiled from the zod schema's JSON
 * Schema (fast-json-stringify), whose bytes are the zod serializer's (test/server/compiledSerializer.test.ts).
 * The routes that once used it write their answers themselves (the samples page by SQLite, the
 * statistics from the query's columns: docs/decisions.md), and their tests hold those bytes to it.
 */
export const compiledSerializerCompiler = (route: { schema: unknown; method: string; url: string; httpStatus?: string }): ((data: unknown) => string) => {
  if (!(route.httpStatus ?? '200').startsWith('2')) return serializerCompiler(route as never);
  const jsonSchema = z.toJSONSchema(route.schema as z.ZodType, { target: 'draft-7', io: 'output', unrepresentable: 'any' });
  return fastJsonStringify(jsonSchema as never) as (data: unknown) => string;
};
