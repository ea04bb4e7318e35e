import { describe, expect, it } from 'vitest';
import { formatBytes } from '../../src/shared/byteSize.js';

/** Issue 36 point 8: a small import's size read "0.0 MiB" (console) and "0.0 MiB / 0.0 MiB" (the CLI's progress line). */
describe('sizes as a person reads them (console and CLI)', () => {
  it('shows bytes under 1 KiB, KiB under 0.1 MiB, MiB above: never "0.0 MiB"', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(812)).toBe('812 B');
    expect(formatBytes(1024)).toBe('1.0 KiB');
    expect(formatBytes(14_321)).toBe('14.0 KiB');
    expect(formatBytes(0.1 * 1024 * 1024 - 1)).toBe('102.4 KiB');
    expect(formatBytes(0.1 * 1024 * 1024)).toBe('0.1 MiB');
    expect(formatBytes(734_003_200)).toBe('700.0 MiB');
    for (let n = 0; n < 200_000; n += 997) expect(formatBytes(n)).not.toMatch(/^0\.0 /);
  });
});
