import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  eventTypeFilter,
  streamNameFilter,
  type AppendStreamState,
  type CurrentStreamState,
  type Filter,
  type RecordedEvent as KurrentRecordedEvent,
  type StreamState,
} from '@kurrent/kurrentdb-client';
import type { AllFilter, ExpectedRevision, RecordedEvent } from './eventStore.js';

/**
 * What the KurrentDB adapter translates between the port and the client: revisions and stream
 * states, filters (and which of the server's secondary indexes answers one), recorded events.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The server's built-in secondary indexes (KurrentDB 25.1+), read through a one-prefix stream filter. */
export const EVENT_TYPE_INDEX = '$idx-et-';
export const CATEGORY_INDEX = '$idx-ce-';

export function normalizeEventId(id: string): string {
  // KurrentDB stores ids as UUIDs and hands them back lower-case.
  if (!UUID.test(id)) throw new TypeError(`KurrentDB event ids must be UUIDs, got "${id}"`);
  return id.toLowerCase();
}

export function toRevision(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`expected revision must be a non-negative integer, got ${n}`);
  return BigInt(n);
}

export function toAppendState(expected: ExpectedRevision): AppendStreamState {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'stream_exists') return STREAM_EXISTS;
  return toRevision(expected);
}

export function toDeleteState(expected: Exclude<ExpectedRevision, 'stream_exists'>): StreamState {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return toRevision(expected);
}

/** The client says `no_stream`, or a negative number for a deleted or tombstoned stream. */
export function toActual(current: CurrentStreamState | undefined): number | 'no_stream' {
  return typeof current === 'bigint' && current >= 0n ? Number(current) : 'no_stream';
}

export function positiveBigInt(n: number | null | undefined): bigint | null {
  return n !== null && n !== undefined && n > 0 ? BigInt(Math.trunc(n)) : null;
}

/**
 * The secondary index that holds every event a filter can match, when one does: the event-type
 * index for one type, the category index for one prefix that is a whole category (`user-`: the
 * server's category is the stream name up to its first `-`). The index may hold more (a prefix
 * filter next to the type); matchesFilter drops that here.
 */
export function indexFor(filter: AllFilter | undefined): string | null {
  const types = filter?.eventTypes ?? [];
  const prefixes = filter?.streamPrefixes ?? [];
  if (types.length === 1) return EVENT_TYPE_INDEX + types[0]!;
  if (types.length === 0 && prefixes.length === 1) {
    const category = /^([^-]+)-$/.exec(prefixes[0]!)?.[1];
    if (category && !category.startsWith('$')) return CATEGORY_INDEX + category;
  }
  return null;
}

/**
 * The server-side filter of a read or subscription of $all: an index when given one, else by
 * type (regex) or by prefix. The server filters on one dimension only; with both given, types go
 * to the server and prefixes are checked here (matchesFilter runs on every delivered event).
 */
export function toServerFilter(filter: AllFilter | undefined, index: string | null): Filter {
  if (index) return streamNameFilter({ prefixes: [index] });
  if (filter?.eventTypes?.length) return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$` });
  if (filter?.streamPrefixes?.length) return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  // Without a filter the server would also send every system event ($stats, $metadata, links...).
  return eventTypeFilter({ regex: '^[^$]' });
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function isSystemEvent(e: { type: string; streamId: string }): boolean {
  return e.type.startsWith('$') || e.streamId.startsWith('$');
}

export function toRecorded(e: KurrentRecordedEvent): RecordedEvent {
  return {
    id: e.id,
    type: e.type,
    data: asRecord(e.data),
    metadata: asRecord(e.metadata),
    streamName: e.streamId,
    streamRevision: Number(e.revision),
    globalPosition: e.position ? Number(e.position.commit) : 0,
    createdAt: e.created instanceof Date ? e.created : new Date(e.created),
  };
}

/** Events written by other tools may carry binary or non-object JSON payloads. */
function asRecord(value: unknown): Record<string, unknown> {
  let v = value;
  if (v instanceof Uint8Array) {
    if (v.length === 0) return {};
    try {
      v = JSON.parse(Buffer.from(v).toString('utf8'));
    } catch {
      return { raw: Buffer.from(value as Uint8Array).toString('base64') };
    }
  }
  if (v === undefined || v === null) return {};
  if (typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  return { value: v };
}

export type ReplayVerdict =
  | { kind: 'none' }
  | { kind: 'replay'; last: KurrentRecordedEvent }
  | { kind: 'conflict'; id: string }
  /** Some ids sit at the very start of the window: the batch may begin before it. */
  | { kind: 'cut'; id: string };

/** Where `ids` sit in `window` (consecutive events of one stream, ascending revisions). */
export function matchReplay(window: readonly KurrentRecordedEvent[], ids: readonly (string | undefined)[]): ReplayVerdict {
  const at = new Map<string, number>();
  window.forEach((e, i) => at.set(e.id.toLowerCase(), i));
  const start = at.get(ids[0]!);
  if (start === undefined) {
    for (let i = 1; i < ids.length; i++) {
      const found = ids[i] === undefined ? undefined : at.get(ids[i]!);
      if (found !== undefined) return found < i ? { kind: 'cut', id: ids[i]! } : { kind: 'conflict', id: ids[i]! };
    }
    return { kind: 'none' };
  }
  for (let i = 0; i < ids.length; i++) {
    const stored = window[start + i];
    if (ids[i] === undefined || !stored || stored.id.toLowerCase() !== ids[i]) return { kind: 'conflict', id: ids[i] ?? '' };
  }
  return { kind: 'replay', last: window[start + ids.length - 1]! };
}
