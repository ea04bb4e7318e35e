import { connect } from 'node:net';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { AnswerBytes, sendAnswerBytes } from '../../src/server/answerBytes.js';

/** Issue 38: large answers (the page of 1,000 samples, statistics) are written once into kept buffers (src/server/answerBytes.ts). */
describe('AnswerBytes: an answer written once as UTF-8 into a kept buffer', () => {
  it('holds its text as UTF-8 byte for byte, across growing past the first buffer and multi-byte characters', () => {
    const out = new AnswerBytes();
    const pieces: string[] = [];
    for (let i = 0; i < 80_000; i++) pieces.push(i % 9 ? `{"i":${i},"s":"abc"},` : `"ü€𝄞 ${i}",`);
    for (const p of pieces) out.write(p);
    const want = Buffer.from(pieces.join(''), 'utf8');
    expect(want.length).toBeGreaterThan(1 << 20);
    expect(out.bytes().equals(want)).toBe(true);
    out.release();
  });

  it('a kept buffer is handed out again only after the answer holding it was released', () => {
    const a = new AnswerBytes();
    a.write('first answer');
    const b = new AnswerBytes();
    b.write('second');
    expect(a.bytes().toString()).toBe('first answer');
    a.release();
    const c = new AnswerBytes();
    c.write('third answer, in the first one\'s buffer');
    expect(b.bytes().toString()).toBe('second');
    expect(c.bytes().toString()).toBe("third answer, in the first one's buffer");
    b.release();
    c.release();
  });
});

describe('answers sent from kept buffers over a real socket', () => {
  const app = Fastify();
  // Each answer is 4,000,000 bytes of its own letter (a buffer that is kept): a buffer reused before its answer was written would show another's.
  app.get('/big/:c', (request, reply) => {
    const c = (request.params as { c: string }).c;
    const out = new AnswerBytes();
    for (let i = 0; i < 4000; i++) out.write(c.repeat(1000));
    return sendAnswerBytes(reply.type('text/plain; charset=utf-8'), out);
  });
  afterAll(() => app.close());

  it('answers written while their clients do not read each arrive whole and unmixed, with their Content-Length', async () => {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(base);
    const letters = 'abcdef'.split('');
    // Every client sends its request and reads nothing until all have been answered: each answer
    // stays mostly in its (kept) buffer, waiting for the socket, while the next ones are written.
    const clients = letters.map((c) => {
      const socket = connect(Number(port), '127.0.0.1');
      socket.pause();
      socket.write(`GET /big/${c} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`);
      return socket;
    });
    await new Promise((r) => setTimeout(r, 300));
    const answers = await Promise.all(
      clients.map(
        (socket) =>
          new Promise<Buffer>((resolve, reject) => {
            const chunks: Buffer[] = [];
            socket.on('data', (d: Buffer) => chunks.push(d));
            socket.on('end', () => resolve(Buffer.concat(chunks)));
            socket.on('error', reject);
            socket.resume();
          }),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      const split = answer.indexOf('\r\n\r\n');
      expect(answer.subarray(0, split).toString()).toMatch(/\r\ncontent-length: 4000000\r\n/i);
      const body = answer.subarray(split + 4).toString();
      expect(body.length).toBe(4_000_000);
      expect(body.replaceAll(letters[i]!, '')).toBe('');
    }
  });
});
