/**
 * Raw payload store port: uploads and provider payloads exactly as received, content-addressed
 * by SHA-256. They are the replay source for re-normalisation, so `put` returns only once the
 * bytes are durable.
 */
export type RawObject = { key: string; sha256: string; bytes: number };

export interface RawStore {
  readonly kind: 'file' | 'gridfs';
  put(data: Buffer): Promise<RawObject>;
  get(key: string): Promise<Buffer>;
  exists(key: string): Promise<boolean>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

export class RawObjectMissingError extends Error {
  override name = 'RawObjectMissingError';
}
