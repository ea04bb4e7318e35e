import { afterAll } from 'vitest';
import { removeTempDirs } from './tmp.js';

/**
 * Runs in every test file (vitest.config.ts `setupFiles`). A test process runs many files in turn
 * where isolation is off, so a file's temporary directories are removed when the file ends, after
 * its own afterAll hooks have closed its services, rather than when the process exits.
 */
afterAll(() => removeTempDirs());
