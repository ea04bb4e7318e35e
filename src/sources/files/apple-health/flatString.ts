/**
 * A copy of `s` that holds only its own characters. The parser's strings are slices of the text
 * chunk they came from, and a slice kept keeps its whole chunk: strings that outlive their record
 * (the provenance device-a caches for the upload, a sleep sample's time zone, cache keys) are
 * copied, or a 2 GB export would keep every chunk its sleep samples came from.
 */
export function flat(s: string): string;
export function flat(s: string | null): string | null;
export function flat(s: string | null): string | null {
  return s === null || s.length < 13 ? s : (' ' + s).slice(1);
}
