import { serializerCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { compiledSerializerCompiler } from '../support/compiledSerializer.js';
import { SampleStatistics } from '../../src/server/routes/sampleStats.js';
import { QuantitySample } from '../../src/server/routes/samples.js';
import { pageOf, Problem } from '../../src/server/schemas.js';

/**
 * Issue 27 ("Reads: a page of 1,000 records … serialise with compiled schemas"): the samples page
 * is written by a serializer compiled from its schema; its answers must be the very bytes the zod
 * serializer wrote.
 */
const route = (schema: unknown, httpStatus = '200') => ({ schema, method: 'GET', url: '/v1/users/:id/samples', httpStatus });

const sample = (i: number, over: Record<string, unknown> = {}) => ({
  id: i,
  type: 'heart_rate',
  value: 60.5 + i,
  unit: 'count/min',
  start_date: '2025-11-01T00:00:00.000Z',
  end_date: '2025-11-01T00:01:00.000Z',
  provider: 'device-a',
  source: 'apple',
  source_name: i % 2 ? null : 'Apple Watch "Ultra" \u00e9\n',
  source_bundle_id: null,
  device_model: 'Watch',
  product_type: null,
  device: null,
  body_worn: true,
  external_id: `E-${i}`,
  is_primary_source: i % 3 !== 0,
  was_user_entered: false,
  metadata: { timezone: 'Europe/Berlin', nested: { list: [1, 'two', null], flag: true }, original_value: 61 },
  ingested_at: '2025-11-02T00:00:00.000Z',
  quality: i % 4 === 0 ? ['implausible_value', 'manual'] : [],
  ...over,
});

describe('compiled serializer of record pages (issue 27)', () => {
  it('writes a samples page byte for byte as the zod serializer does, nulls, escapes and nested metadata included', () => {
    const schema = pageOf(QuantitySample);
    const page = { data: Array.from({ length: 50 }, (_, i) => sample(i)), next_cursor: 'c1' };
    expect(compiledSerializerCompiler(route(schema))(page)).toBe(serializerCompiler(route(schema) as never)(page));
    const last = { data: [], next_cursor: null };
    expect(compiledSerializerCompiler(route(schema))(last)).toBe(serializerCompiler(route(schema) as never)(last));
  });

  it('writes statistics byte for byte as the zod serializer does', () => {
    const bucket = (i: number) => ({ start: `2026-01-${String(1 + (i % 28)).padStart(2, '0')}T00:00:00+01:00`, provider: 'device-a', source: 'apple', unit: 'count/min', count: 1440 + i, sum: 86_400.25 * i, avg: 60.125, min: 41, max: 180.5 });
    const stats = { type: 'heart_rate', interval: 'day', tz: 'Europe/Berlin', view: 'merged', start: '2026-01-01T00:00:00+01:00', end: '2027-01-01T00:00:00+01:00', truncated: false, buckets: Array.from({ length: 40 }, (_, i) => bucket(i)) };
    expect(compiledSerializerCompiler(route(SampleStatistics))(stats)).toBe(serializerCompiler(route(SampleStatistics) as never)(stats));
  });

  it('leaves out fields the schema does not name, as zod does', () => {
    const schema = pageOf(QuantitySample);
    const page = { data: [sample(1, { _id: 'internal-key', user_id: 'u', hidden: false })], next_cursor: null };
    const out = JSON.parse(compiledSerializerCompiler(route(schema))(page)) as { data: Record<string, unknown>[] };
    expect(out.data[0]).not.toHaveProperty('_id');
    expect(out.data[0]).not.toHaveProperty('user_id');
    expect(out).toEqual(JSON.parse(serializerCompiler(route(schema) as never)(page)));
  });

  it('keeps the zod serializer for problem answers', () => {
    const problem = { type: 'about:blank', title: 'Not Found', status: 404, detail: 'user not found', request_id: 'r1' };
    expect(compiledSerializerCompiler(route(Problem, '404'))(problem)).toBe(JSON.stringify(problem));
    expect(() => compiledSerializerCompiler(route(Problem, '404'))({ ...problem, status: 'x' })).toThrow();
  });
});
