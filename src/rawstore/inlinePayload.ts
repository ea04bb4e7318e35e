import { Readable } from 'node:stream';
import { isInlineKey } from '../../commands/ingestion/upload.js';
import { RawObjectMissingError, type RawStore } from './rawStore.js';

/**
 * Small payloads are kept in their upload's acceptance event (sealed, base64), not in a file of
 * the raw store (issue 37): the acceptance is then one durable write, the event store's group
 * commit, shared with the uploads that arrive meanwhile, instead of a file written, synced and
 * renamed and its directory synced for every one-line upload. Up to this many bytes as sent.
 */
export const INLINE_PAYLOAD_MAX_BYTES = 64 * 1024;

/**
 * The raw store as one upload's job reads it: its inline payload (when it has one) under its key,
 * every other key from the store.
 */
export function withInlinePayload(rawStore: RawStore, key: string, inlineBase64: string | undefined): RawStore {
  if (!isInlineKey(key)) return rawStore;
  if (inlineBase64 === undefined) throw new RawObjectMissingError(`the upload's inline payload ${key} is missing from its acceptance`);
  const bytes = Buffer.from(inlineBase64, 'base64');
  const mine = (k: string) => k === key;
  return {
    kind: rawStore.kind,
    put: (data, namespace, options) => rawStore.put(data, namespace, options),
    putStream: (data, namespace, options) => rawStore.putStream(data, namespace, options),
    get: async (k) => (mine(k) ? bytes : rawStore.get(k)),
    readRange: (k, start, end) => (mine(k) ? Readable.from(end > start ? [bytes.subarray(start, end)] : []) : rawStore.readRange(k, start, end)),
    size: async (k) => (mine(k) ? bytes.length : rawStore.size(k)),
    exists: async (k) => mine(k) || rawStore.exists(k),
    delete: (k) => (mine(k) ? Promise.resolve() : rawStore.delete(k)),
    deleteNamespace: (namespace) => rawStore.deleteNamespace(namespace),
    close: () => rawStore.close(),
  };
}
