import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

/** Issue 38 (memory): the projector thread's page cache is a setting, with a default and bounds (docs/memory.md). */
describe('PROJECTOR_CACHE_MIB sizes the projector thread\'s page cache (issue 38, memory)', () => {
  it('defaults to 16 MiB and takes a whole number of MiB', () => {
    expect(loadConfig({} as NodeJS.ProcessEnv).projectorCacheMiB).toBe(16);
    expect(loadConfig({ PROJECTOR_CACHE_MIB: '64' } as NodeJS.ProcessEnv).projectorCacheMiB).toBe(64);
  });

  it('refuses no cache, a fraction and more than 64 GiB at start-up', () => {
    for (const v of ['0', '1.5', '65537', 'lots']) expect(() => loadConfig({ PROJECTOR_CACHE_MIB: v } as NodeJS.ProcessEnv), v).toThrow(ConfigError);
  });
});

/** Issue 38 (V8's GC threads): the projector thread's old-generation cap is a setting (docs/memory.md, "The threads' heaps"). */
describe("PROJECTOR_HEAP_MB caps the projector thread's old generation (issue 38, V8's GC threads)", () => {
  it('defaults to 160 MB and takes a whole number of MB from 64', () => {
    expect(loadConfig({} as NodeJS.ProcessEnv).projectorHeapMb).toBe(160);
    expect(loadConfig({ PROJECTOR_HEAP_MB: '1024' } as NodeJS.ProcessEnv).projectorHeapMb).toBe(1024);
  });

  it('refuses less than 64 MB, a fraction and more than 64 GiB at start-up', () => {
    for (const v of ['0', '63', '1.5', '65537', 'lots']) expect(() => loadConfig({ PROJECTOR_HEAP_MB: v } as NodeJS.ProcessEnv), v).toThrow(ConfigError);
  });
});
