/**
 * The first `want` bytes of a byte stream (or all of it, if shorter), and the whole stream again
 * from its start: a check can judge a body's head before it is stored, holding at most `want`
 * bytes and one more chunk. A stream that breaks off while the head is read gives what arrived,
 * then the same error from `rest`, so a caller that keeps what arrived still does.
 */
export async function streamHead(body: AsyncIterable<Buffer>, want: number): Promise<{ head: Buffer; rest: AsyncIterable<Buffer> }> {
  const it = body[Symbol.asyncIterator]();
  const parts: Buffer[] = [];
  let n = 0;
  let ended = false;
  let failure: { err: unknown } | null = null;
  while (n < want) {
    try {
      const r = await it.next();
      if (r.done) {
        ended = true;
        break;
      }
      parts.push(r.value);
      n += r.value.length;
    } catch (err) {
      failure = { err };
      break;
    }
  }
  const head = Buffer.concat(parts);
  async function* rest(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (failure) throw failure.err;
    if (ended) return;
    for (;;) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  }
  return { head, rest: rest() };
}
