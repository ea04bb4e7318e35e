import type { Readable } from 'node:stream';

/**
 * Raw payload store port: uploads and provider payloads exactly as received, content-addressed
 * by SHA-256 within a namespace (the user). They are the replay source for re-normalisation, so
 * `put` returns only once the bytes are durable. Namespaces keep erasure simple and safe: the same
 * bytes uploaded by two users are two objects, and erasing one user removes only theirs.
 */
export type RawObject = { key: string; sha256: string; bytes: number };

export type PutOptions = {
  /**
   * The digest that names the object, when `data` is not the content itself but its sealed form
   * (docs/erasure.md): the payload's own SHA-256, so the same payload is still stored once.
   */
  sha256?: string;
};

export interface RawStore {
  readonly kind: 'file' | 'gridfs';
  put(data: Buffer, namespace: string, options?: PutOptions): Promise<RawObject>;
  /**
   * Stores a stream's bytes with the durability of `put` (an import of gigabytes is never held in
   * memory); `sha256` names the object (the payload's own digest, known before it is sealed).
   */
  putStream(data: Readable, namespace: string, options: Required<PutOptions>): Promise<RawObject>;
  get(key: string): Promise<Buffer>;
  /** The stored bytes [start, end) as a stream: large objects are read by range, never whole. */
  readRange(key: string, start: number, end: number): Readable;
  /** The stored object's size in bytes. */
  size(key: string): Promise<number>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  /** Removes every object of a namespace (user erasure). */
  deleteNamespace(namespace: string): Promise<void>;
  close(): Promise<void>;
}

const NAMESPACE = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^([A-Za-z0-9_-]{1,64})\/([0-9a-f]{64})$/;

export function checkNamespace(namespace: string): string {
  if (!NAMESPACE.test(namespace)) throw new Error(`invalid raw namespace ${namespace}`);
  return namespace;
}

export function rawKey(namespace: string, sha256: string): string {
  return `${checkNamespace(namespace)}/${sha256}`;
}

export function parseRawKey(key: string): { namespace: string; sha256: string } {
  const m = KEY.exec(key);
  if (!m) throw new Error(`invalid raw object key ${key}`);
  return { namespace: m[1]!, sha256: m[2]! };
}

export class RawObjectMissingError extends Error {
  override name = 'RawObjectMissingError';
}
