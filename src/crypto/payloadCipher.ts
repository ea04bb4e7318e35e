import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants as zlib } from 'node:zlib';

/**
 * AES-256-GCM under a data key (docs/erasure.md). Health payloads are compressed before they are
 * encrypted (ciphertext does not compress), so a sealed record batch is as small as the
 * compressed batch the event store kept before.
 */

/** The sealed form of one JSON value inside an event: `key` names the data key, the rest opens with it. */
export type SealedJson = { key: string; iv: string; tag: string; data: string };

export class PayloadCipherError extends Error {
  override name = 'PayloadCipherError';
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals the JSON text of a value (or its UTF-8 bytes); `aad` ties the result to where it is stored. */
export function sealJson(dataKey: Buffer, keyId: string, json: string | Buffer, aad: string): SealedJson {
  const packed = brotliCompressSync(json, { params: { [zlib.BROTLI_PARAM_QUALITY]: 1, [zlib.BROTLI_PARAM_SIZE_HINT]: json.length } });
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(packed), cipher.final()]);
  return { key: keyId, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: ct.toString('base64') };
}

/** The JSON text `sealJson` sealed; throws PayloadCipherError when the key, the data or `aad` do not match. */
export function openJson(dataKey: Buffer, sealed: SealedJson, aad: string): string {
  const decipher = createDecipheriv('aes-256-gcm', dataKey, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  let packed: Buffer;
  try {
    packed = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
  } catch {
    throw new PayloadCipherError(`sealed payload under ${sealed.key} does not open`);
  }
  return brotliDecompressSync(packed).toString('utf8');
}

/** Raw payloads sealed under a data key start with this; anything else is a payload stored before sealing existed. */
const RAW_MAGIC = Buffer.from('WSSEAL1\u0000', 'latin1');

export function isSealedBytes(data: Buffer): boolean {
  return data.length >= RAW_MAGIC.length + IV_BYTES + TAG_BYTES && data.subarray(0, RAW_MAGIC.length).equals(RAW_MAGIC);
}

/** Seals a raw payload as stored (magic, iv, tag, ciphertext). Uploads are compressed already, or small. */
export function sealBytes(dataKey: Buffer, data: Buffer, aad: string): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(data), cipher.final()]);
  return Buffer.concat([RAW_MAGIC, iv, cipher.getAuthTag(), ct]);
}

export function openBytes(dataKey: Buffer, sealed: Buffer, aad: string): Buffer {
  if (!isSealedBytes(sealed)) throw new PayloadCipherError('not a sealed payload');
  const at = RAW_MAGIC.length;
  const decipher = createDecipheriv('aes-256-gcm', dataKey, sealed.subarray(at, at + IV_BYTES));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.subarray(at + IV_BYTES, at + IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(at + IV_BYTES + TAG_BYTES)), decipher.final()]);
  } catch {
    throw new PayloadCipherError('sealed payload does not open');
  }
}
