const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * A size as a person reads it, one rule for the console and the CLI: bytes under 1 KiB, KiB under
 * 0.1 MiB (where one decimal of MiB would read "0.0 MiB"), MiB with one decimal above.
 */
export function formatBytes(bytes: number): string {
  if (bytes < KiB) return `${bytes} B`;
  if (bytes < 0.1 * MiB) return `${(bytes / KiB).toFixed(1)} KiB`;
  return `${(bytes / MiB).toFixed(1)} MiB`;
}
