import { describe, expect, it } from 'vitest';
import { hasBareLineBreak, headEnd, parseRequestHead, parseResponseHead, responseFraming } from './http1-head.js';

const req = (lines: string[]) => parseRequestHead(lines.join('\r\n'));

describe('parseRequestHead', () => {
  it('reads the request line, the fields as sent and the framing', () => {
    expect(req(['POST /tools/get_weather?x=1 HTTP/1.1', 'Host: a', 'Content-Type: application/json', 'Content-Length: 12', 'X-Empty:', 'X-Pad: \t v \t'])).toEqual({
      method: 'POST',
      target: '/tools/get_weather?x=1',
      raw: ['Host', 'a', 'Content-Type', 'application/json', 'Content-Length', '12', 'X-Empty', '', 'X-Pad', 'v'],
      framing: 'length',
      contentLength: 12,
      close: false,
    });
    expect(req(['GET / HTTP/1.1', 'host: a', 'transfer-encoding: Chunked', 'connection: keep-alive, close'])).toMatchObject({ framing: 'chunked', close: true });
    expect(req(['GET / HTTP/1.1', 'host: a', 'content-length: 0'])).toMatchObject({ framing: 'none', contentLength: 0 });
    expect(req(['PROPFIND /dav HTTP/1.1', 'host: a'])).toMatchObject({ method: 'PROPFIND' });
  });

  it('leaves to node:http whatever is not plain HTTP/1.1 it can relay', () => {
    const refused = [
      ['GET / HTTP/1.0', 'host: a'],
      ['get / HTTP/1.1', 'host: a'],
      // A method llhttp does not know: node:http answers 400.
      ['FOO / HTTP/1.1', 'host: a'],
      ['CONNECT a:443 HTTP/1.1', 'host: a:443'],
      ['GET /a b HTTP/1.1', 'host: a'],
      ['GET / HTTP/1.1'],
      ['GET / HTTP/1.1', 'host: a', 'host: b'],
      ['GET / HTTP/1.1', 'host: a', ' folded'],
      ['GET / HTTP/1.1', 'host : a'],
      ['GET / HTTP/1.1', 'host: a', 'no colon here'],
      ['GET / HTTP/1.1', 'host: a', 'x: bad\u0001value'],
      ['GET / HTTP/1.1', 'host: a\nx: y'],
      ['GET / HTTP/1.1', 'host: a\rx: y'],
      ['POST / HTTP/1.1', 'host: a', 'content-length: 3', 'content-length: 4'],
      // Even repeated identical lengths: llhttp refuses them.
      ['PUT / HTTP/1.1', 'host: a', 'content-length: 3', 'content-length: 3'],
      ['PUT / HTTP/1.1', 'host: a', 'content-length: 3, 3'],
      ['POST / HTTP/1.1', 'host: a', 'content-length: -1'],
      ['POST / HTTP/1.1', 'host: a', 'content-length: 3', 'transfer-encoding: chunked'],
      ['POST / HTTP/1.1', 'host: a', 'transfer-encoding: gzip, chunked'],
      ['POST / HTTP/1.1', 'host: a', 'transfer-encoding: chunked', 'transfer-encoding: chunked'],
      ['GET / HTTP/1.1', 'host: a', 'connection: Upgrade', 'upgrade: websocket'],
      ['GET / HTTP/1.1', 'host: a', 'upgrade: h2c'],
      ['POST / HTTP/1.1', 'host: a', 'content-length: 3', 'expect: 100-continue'],
      ['GET / HTTP/1.1', 'host: a', 'te: trailers'],
    ];
    for (const lines of refused) expect(req(lines), lines.join(' | ')).toBeUndefined();
  });

  it('finds the end of a head from where the last search stopped', () => {
    const buf = Buffer.from('GET / HTTP/1.1\r\nhost: a\r\n\r\nbody');
    expect(headEnd(buf, 0)).toBe(23);
    expect(headEnd(buf, 20)).toBe(23);
    expect(headEnd(buf.subarray(0, 25), 0)).toBe(-1);
  });

  it('tells a head with a bare CR or LF, which will never end with CRLF CRLF', () => {
    const bare = (text: string, from = 0) => hasBareLineBreak(Buffer.from(text, 'latin1'), from);
    expect(bare('GET / HTTP/1.1\r\nhost: a\r\n')).toBe(false);
    // A CR at the end may be the first half of a CRLF still on its way.
    expect(bare('GET / HTTP/1.1\r')).toBe(false);
    expect(bare('GET / HTTP/1.1\nhost: a\n')).toBe(true);
    expect(bare('\nGET')).toBe(true);
    expect(bare('GET / HTTP/1.1\rhost: a')).toBe(true);
    // Searching from where the last search stopped still sees the CR before an LF.
    expect(bare('GET / HTTP/1.1\r\nhost', 15)).toBe(false);
  });
});

describe('parseResponseHead and responseFraming', () => {
  const res = (lines: string[]) => parseResponseHead(lines.join('\r\n'))!;

  it('reads status, reason, keep-alive and framing', () => {
    const h = res(['HTTP/1.1 200 OK', 'Content-Length: 5', 'Keep-Alive: timeout=5, max=100']);
    expect(h).toMatchObject({ status: 200, reason: 'OK', http11: true, close: false, contentLength: 5, keepAliveSeconds: 5 });
    expect(responseFraming('GET', h)).toBe('length');
    expect(responseFraming('HEAD', h)).toBe('none');
    expect(res(['HTTP/1.1 204'])).toMatchObject({ status: 204, reason: '' });
    expect(responseFraming('GET', res(['HTTP/1.1 204 No Content']))).toBe('none');
    expect(responseFraming('GET', res(['HTTP/1.1 304 Not Modified', 'content-length: 10']))).toBe('none');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'transfer-encoding: chunked']))).toBe('chunked');
    // Both framings: an error, as node:http's client has it (RFC 9112 section 6.3 "ought to be handled as an error").
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'transfer-encoding: chunked', 'content-length: 3']))).toBe('both');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'content-length: 3', 'transfer-encoding: gzip']))).toBe('both');
    expect(responseFraming('HEAD', res(['HTTP/1.1 200 OK', 'transfer-encoding: chunked', 'content-length: 3']))).toBe('none');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'transfer-encoding: gzip']))).toBe('close');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK']))).toBe('close');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'content-length: 0']))).toBe('none');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'content-length: 1', 'content-length: 2']))).toBe('bad_length');
    expect(responseFraming('GET', res(['HTTP/1.1 200 OK', 'content-length: 2', 'content-length: 2']))).toBe('bad_length');
    expect(res(['HTTP/1.1 200 OK', 'Connection: close'])).toMatchObject({ close: true });
    expect(res(['HTTP/1.0 200 OK'])).toMatchObject({ http11: false, close: true });
    expect(res(['HTTP/1.0 200 OK', 'connection: keep-alive'])).toMatchObject({ close: false });
  });

  it('refuses malformed heads', () => {
    for (const text of ['HTTP/1.1 20 OK', 'HTTP/2 200 OK', 'HTTP/1.1 200 OK\r\nbad header', 'HTTP/1.1 200 OK\r\nx:\u0000', 'HTTP/1.1 200 OK\nx: y']) {
      expect(parseResponseHead(text), text).toBeUndefined();
    }
  });
});
