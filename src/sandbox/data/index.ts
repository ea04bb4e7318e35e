import type { DataHandler } from '../sandboxServer.js';
import { withingsData } from './withings.js';

/** Every provider's data API in the sandbox, one file per provider beside this one. */
export const SANDBOX_DATA: Partial<Record<string, DataHandler>> = {
  withings: withingsData,
};
