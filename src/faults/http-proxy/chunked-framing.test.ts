import fc from 'fast-check';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ChunkedFraming } from './chunked-framing.js';

/** Feeds `wire` in the given pieces; returns the payload, where the body ended, or -1. */
function run(wire: Buffer, cuts: number[]): { payload: string; end: number } {
  const framing = new ChunkedFraming();
  const payload: Buffer[] = [];
  const points = [...new Set([0, ...cuts.filter((c) => c > 0 && c < wire.length), wire.length])].sort((a, b) => a - b);
  for (let i = 0; i + 1 < points.length; i++) {
    const piece = wire.subarray(points[i]!, points[i + 1]!);
    const used = framing.feed(piece, 0, piece.length, (b, s, e) => payload.push(b.subarray(s, e)));
    if (used === -1) return { payload: '', end: -1 };
    if (framing.done) return { payload: Buffer.concat(payload).toString(), end: points[i]! + used };
  }
  return { payload: Buffer.concat(payload).toString(), end: framing.done ? wire.length : NaN };
}

describe('ChunkedFraming', () => {
  it('finds the end of a chunked body however it is cut, and hands on the payload', () => {
    const wire = Buffer.from('5;ext=1\r\nhello\r\n1A\r\n' + 'x'.repeat(26) + '\r\n0\r\nTrailer: t\r\n\r\nGET /next');
    const end = wire.indexOf('GET /next');
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: wire.length }), { maxLength: 12 }), (cuts) => {
        expect(run(wire, cuts)).toEqual({ payload: 'hello' + 'x'.repeat(26), end });
      }),
    );
    // Byte by byte.
    expect(run(wire, Array.from({ length: wire.length }, (_, i) => i))).toEqual({ payload: 'hello' + 'x'.repeat(26), end });
  });

  it('takes an empty body and resets for the next message', () => {
    const framing = new ChunkedFraming();
    const wire = Buffer.from('0\r\n\r\n');
    expect(framing.feed(wire, 0, wire.length)).toBe(5);
    expect(framing.done).toBe(true);
    framing.reset();
    expect(framing.done).toBe(false);
    expect(framing.feed(wire, 0, 3)).toBe(3);
  });

  it('refuses broken framing', () => {
    for (const bad of ['x\r\n', '\r\n', '5\r\nhelloX\r\n', '5\n', '1234567890abc\r\n', '3\r\nabc\r\n0\r\nt: 1\n\r\n', `5;${'a'.repeat(5000)}\r\n`, `5;a="${'q'.repeat(5000)}"\r\n`]) {
      expect(run(Buffer.from(bad), []).end, JSON.stringify(bad)).toBe(-1);
    }
  });

  // The fast path relays chunked bodies byte for byte, over upstream sockets that carry other
  // clients' requests next: a body it reads one way and the upstream another is request smuggling.
  // So it accepts no chunk line or trailer node:http's parser refuses, and ends the body where node does.
  it('accepts only what node:http accepts, and ends the body where node does', async () => {
    const accepted = [
      '5\r\nhello\r\n0\r\n\r\n',
      '0000005\r\nhello\r\n00\r\n\r\n',
      '00000000000000005\r\nhello\r\n0\r\n\r\n',
      '5;a\r\nhello\r\n0\r\n\r\n',
      '5;a=b;c=d\r\nhello\r\n0;e=f\r\n\r\n',
      '5;a="b c\\" ;\xe9"\r\nhello\r\n0\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T: 1\r\nX-U:\r\nHost: y\r\nX-V: a\tb \xe9\r\n\r\n',
    ];
    const refused = [
      '5 \r\nhello\r\n0\r\n\r\n',
      '5\t\r\nhello\r\n0\r\n\r\n',
      ' 5\r\nhello\r\n0\r\n\r\n',
      '5 ;a\r\nhello\r\n0\r\n\r\n',
      '5; a\r\nhello\r\n0\r\n\r\n',
      '5;a = b\r\nhello\r\n0\r\n\r\n',
      '5;\r\nhello\r\n0\r\n\r\n',
      '5;a;\r\nhello\r\n0\r\n\r\n',
      '5;a@b\r\nhello\r\n0\r\n\r\n',
      '5;a=b c\r\nhello\r\n0\r\n\r\n',
      '5;a=\xe9\r\nhello\r\n0\r\n\r\n',
      '5;a="b\x01c"\r\nhello\r\n0\r\n\r\n',
      '5;a\rx\r\nhello\r\n0\r\n\r\n',
      '0x5\r\nhello\r\n0\r\n\r\n',
      '-1\r\nx\r\n0\r\n\r\n',
      '10000000000000000\r\nx\r\n0\r\n\r\n',
      '5\r\nhello\r\n0\r\nbad trailer\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T : 1\r\n\r\n',
      '5\r\nhello\r\n0\r\n: x\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T: \x01\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T: a\x7fb\r\n\r\n',
      '5\r\nhello\r\n0\r\nX-T: 1\r\n folded\r\n\r\n',
      '5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n',
      '5\r\nhello\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n',
      '5\r\nhello\r\n0\r\nConnection: close\r\n\r\n',
      '5\r\nhello\r\n0\r\n\n',
    ];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('latin1')));
      req.on('end', () => res.end(`body=${body};`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    /** What node:http made of the body followed by a second request: the answers it gave. */
    const node = (body: string) =>
      new Promise<string>((resolve) => {
        const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(text));
        socket.write(Buffer.from(`POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 'latin1'));
      });
    try {
      for (const body of accepted) {
        const wire = Buffer.from(body, 'latin1');
        expect(run(wire, []), JSON.stringify(body)).toEqual({ payload: 'hello', end: wire.length });
        const answers = await node(body);
        expect(answers.match(/HTTP\/1\.1 200 OK/g), JSON.stringify(body)).toHaveLength(2);
        expect(answers).toContain('body=hello;');
      }
      for (const body of refused) {
        expect(run(Buffer.from(body, 'latin1'), []).end, JSON.stringify(body)).toBe(-1);
        expect(await node(body), JSON.stringify(body)).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      }
    } finally {
      server.close();
    }
  });
});
