import { z } from 'zod';
import type { DeviceParser, ParseItem } from '../../../../commands/ingestion/records.js';
import { DEMO_PERSONAS, DEMO_PROVIDER, demoDay } from './personas.js';

/**
 * What a demo "upload" stores: not records but the recipe that makes them (persona, seed, days).
 * The ETL runs it like any payload, so synthetic records take the path real ones take: stored
 * payload → job → sealed record events → projections.
 */
export const DemoRecipe = z.object({
  format: z.literal('wellstream-demo/1'),
  persona: z.enum(DEMO_PERSONAS),
  seed: z.string().min(1),
  days: z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/)).max(90),
  /** Where the persona's slow trends are measured from (personas.ts `demoDay`). */
  anchor: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
});
export type DemoRecipe = z.infer<typeof DemoRecipe>;

export const demoParser: DeviceParser = {
  slug: DEMO_PROVIDER,
  async *parse(payload: Buffer): AsyncIterable<ParseItem> {
    const recipe = DemoRecipe.parse(JSON.parse(payload.toString('utf8')));
    for (const day of recipe.days) for (const record of demoDay(recipe.persona, day, recipe.seed, recipe.anchor)) yield { record };
  },
};
