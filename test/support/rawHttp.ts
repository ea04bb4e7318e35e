import { connect, type Socket } from 'node:net';

export type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/**
 * One HTTP/1.1 connection driven by hand, as a client that writes a whole request before it
 * reads (most do): `exchange` writes every byte, waits until the socket took them, then reads one
 * answer (Content-Length framed). A reset while writing or reading rejects with its code
 * (EPIPE, ECONNRESET), which is what a server that closes on an unread body produces.
 */
export class RawConnection {
  private readonly socket: Socket;
  private buffered = Buffer.alloc(0);
  private failure: Error | null = null;
  private closed = false;
  private wake: (() => void) | null = null;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.buffered = Buffer.concat([this.buffered, d]);
      this.wake?.();
    });
    socket.on('error', (err) => {
      this.failure = err;
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Sends `head` (request line and headers, without the blank line) and `body`, then reads the answer. */
  async exchange(head: string, body: Buffer | string = ''): Promise<RawAnswer> {
    await this.write(Buffer.from(`${head}\r\n\r\n`));
    if (body.length > 0) await this.write(typeof body === 'string' ? Buffer.from(body) : body);
    return this.read();
  }

  /** Writes a chunked body (the size is not declared up front) in pieces of `piece` bytes, then reads the answer. */
  async exchangeChunked(head: string, body: Buffer, piece = 64 * 1024): Promise<RawAnswer> {
    await this.write(Buffer.from(`${head}\r\nTransfer-Encoding: chunked\r\n\r\n`));
    for (let i = 0; i < body.length; i += piece) {
      const part = body.subarray(i, i + piece);
      await this.write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
    }
    await this.write(Buffer.from('0\r\n\r\n'));
    return this.read();
  }

  /** Sends `head` and the first bytes of a body (the rest is never sent unless written with `more`); read the answer with `answer`. */
  async begin(head: string, firstBytes: Buffer | string = ''): Promise<void> {
    await this.write(Buffer.from(`${head}\r\n\r\n`));
    if (firstBytes.length > 0) await this.more(firstBytes);
  }

  /** Writes more of a body begun with `begin`. */
  more(bytes: Buffer | string): Promise<void> {
    return this.write(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
  }

  /** The next answer on the connection (whatever of the request's body was sent or not). */
  answer(): Promise<RawAnswer> {
    return this.read();
  }

  /** Resolves once the server closed the connection (or it was reset). */
  async closedByServer(): Promise<void> {
    while (!this.closed && !this.failure) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.socket.destroy();
  }

  private write(bytes: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.socket.write(bytes, (err) => (err ? reject(err) : resolve()));
    });
  }

  private async read(): Promise<RawAnswer> {
    for (;;) {
      if (this.failure) throw this.failure;
      const end = this.buffered.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = this.buffered.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        if (this.buffered.length >= end + 4 + length) {
          const body = this.buffered.subarray(end + 4, end + 4 + length).toString('utf8');
          this.buffered = this.buffered.subarray(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body };
        }
      }
      if (this.closed) throw Object.assign(new Error('the server closed the connection before answering'), { code: 'ECLOSED' });
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}
