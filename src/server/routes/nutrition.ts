import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { NutritionDoc } from '../../../projections/records/nutritionProjection.js';
import { listNutrition } from '../../../queries/records/listNutrition.js';
import { DateTime, pageOf, withProblems } from '../schemas.js';
import { Metadata, RecordId, RecordProvenance, recordProvenanceOf } from './recordSchemas.js';
import { cursorScope, PagingQuery, readableUser, UserParams, WindowQuery, windowOf } from './recordParams.js';
import type { RouteOptions } from './routeOptions.js';

export const NutritionLog = z
  .object({
    id: RecordId,
    start_date: DateTime,
    end_date: DateTime,
    name: z.string().nullable().describe('Food or meal name, when given'),
    meal_type: z.string().nullable().describe('e.g. breakfast, lunch, dinner, snack'),
    energy_kcal: z.number().nullable(),
    protein_g: z.number().nullable(),
    carbohydrates_g: z.number().nullable(),
    fat_g: z.number().nullable(),
    fiber_g: z.number().nullable(),
    sugar_g: z.number().nullable(),
    sodium_mg: z.number().nullable(),
    water_ml: z.number().nullable(),
    nutrients: z
      .record(z.string(), z.object({ value: z.number(), unit: z.string() }))
      .describe('Every other nutrient as sent, converted to g, mg, µg, kcal or mL where the unit was known'),
    external_id: z.string().describe("The provider's own identifier"),
    metadata: Metadata,
    ...RecordProvenance,
  })
  .describe('Nutrition log');

export const toNutritionLog = (d: NutritionDoc) => ({
  id: d.id,
  start_date: d.start_date,
  end_date: d.end_date,
  name: d.name,
  meal_type: d.meal_type,
  energy_kcal: d.energy_kcal,
  protein_g: d.protein_g,
  carbohydrates_g: d.carbohydrates_g,
  fat_g: d.fat_g,
  fiber_g: d.fiber_g,
  sugar_g: d.sugar_g,
  sodium_mg: d.sodium_mg,
  water_ml: d.water_ml,
  nutrients: d.nutrients,
  external_id: d.external_id,
  metadata: d.metadata,
  ...recordProvenanceOf(d),
});

/** GET /v1/users/{id}/nutrition (spec "Reads": start, end; order start_date; every source, no merged view). */
export const nutritionRoutes: FastifyPluginAsyncZod<RouteOptions> = async (app, { ctx, cursors }) => {
  app.get(
    '/users/:id/nutrition',
    {
      config: { auth: 'tenant' },
      schema: {
        summary: 'Nutrition logs, oldest first',
        description: 'Ordered by start_date, then id; start and end bound start_date. Lists every source (no merged view).',
        tags: ['records'],
        params: UserParams,
        querystring: z.object({ ...WindowQuery, ...PagingQuery }),
        response: withProblems({ 200: pageOf(NutritionLog) }),
      },
    },
    async (request) => {
      const q = request.query;
      const user = await readableUser(ctx, request.tenantId!, request.params.id);
      const window = windowOf(q);
      const scope = cursorScope('nutrition', user.id, { start: q.start, end: q.end });
      const after = q.cursor ? cursors.decode(q.cursor, scope) : null;
      const page = await listNutrition(ctx.readStore, { userId: user.id, window }, { after, limit: q.limit });
      return { data: page.items.map(toNutritionLog), next_cursor: page.next ? cursors.encode(page.next, scope) : null };
    },
  );
};
