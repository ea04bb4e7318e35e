import { constants, gunzipSync } from 'node:zlib';
import type { Sniff } from '../importSource.js';

/** What an Apple Health upload's first bytes say it is. */
export type BodyKind = 'zip' | 'gzip' | 'xml';

const ROOT = 'HealthData';

export function isZip(head: Buffer): boolean {
  return head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04;
}
export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * Why text that should open an export.xml does not, or null. The prolog may hold an XML
 * declaration, processing instructions, comments and a document type declaration; the first
 * element must be <HealthData>. Judged only as far as the head reaches.
 */
function xmlProblem(text: string): string | null {
  let s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  s = s.replace(/^\s+/, '');
  if (!s.startsWith('<')) return 'the body is not a zip archive, gzip or an XML document';
  let i = 0;
  for (;;) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) return null;
    if (s.startsWith('<?', i)) {
      const end = s.indexOf('?>', i);
      if (end === -1) return null;
      i = end + 2;
    } else if (s.startsWith('<!--', i)) {
      const end = s.indexOf('-->', i);
      if (end === -1) return null;
      i = end + 3;
    } else if (s.startsWith('<!DOCTYPE', i)) {
      // The internal subset may be damaged (some iOS versions): the name after DOCTYPE decides.
      const name = /^<!DOCTYPE\s+([^\s[>]+)/.exec(s.slice(i, i + 200))?.[1];
      if (name !== undefined && name !== ROOT) return `an XML document of type ${name}, not an Apple Health export (<${ROOT}>)`;
      return null;
    } else if (s[i] === '<') {
      const name = /^<([^\s/>]+)/.exec(s.slice(i, i + 200))?.[1];
      if (name === undefined) return null;
      return name === ROOT ? null : `an XML document whose root is <${name}>, not an Apple Health export (<${ROOT}>)`;
    } else return 'the body is not a zip archive, gzip or an XML document';
  }
}

function kindProblem(head: Buffer, insideGzip: boolean): string | null {
  if (head.length === 0) return insideGzip ? 'the gzip stream holds nothing' : 'the body is empty';
  if (isZip(head)) return null;
  if (!insideGzip && isGzip(head)) {
    let inner: Buffer;
    try {
      // A prefix of the content: a head is a cut gzip stream, so flush what it holds.
      inner = gunzipSync(head, { finishFlush: constants.Z_SYNC_FLUSH });
    } catch (err) {
      return `the body is not a readable gzip stream (${err instanceof Error ? err.message : String(err)})`;
    }
    if (inner.length === 0) return null; // too little of it to judge
    return kindProblem(inner, true);
  }
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x05 && head[3] === 0x06) return 'the zip archive is empty';
  return xmlProblem(head.toString('utf8'));
}

/** contracts §12: 422 at the request when the first bytes cannot open an Apple Health export. */
export const sniffAppleHealth: Sniff = (head) => kindProblem(head, false);

export function bodyKind(head: Buffer): BodyKind {
  return isZip(head) ? 'zip' : isGzip(head) ? 'gzip' : 'xml';
}
