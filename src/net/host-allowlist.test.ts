import { describe, expect, it } from 'vitest';
import { hostAllowed, hostAllowlist, isLoopbackHost, namedHosts } from './host-allowlist.js';

describe('hostAllowlist / hostAllowed', () => {
  it('bound to loopback: loopback names and the bound address, with or without a port, in any case', () => {
    const allowed = hostAllowlist('127.0.0.1');
    for (const host of ['127.0.0.1', '127.0.0.1:8080', 'localhost', 'LocalHost:3000', '[::1]', '[::1]:80']) expect(hostAllowed(host, allowed), host).toBe(true);
    for (const host of ['attacker.example', 'attacker.example:8080', '127.0.0.1.nip.io', 'localhost.attacker.example', '0.0.0.0', '[::ffff:7f00:1]', '']) {
      expect(hostAllowed(host, allowed), host).toBe(false);
    }
  });

  it('takes the bound address itself: another 127/8 address, or ::1 written bare', () => {
    expect(hostAllowed('127.0.0.5:9', hostAllowlist('127.0.0.5'))).toBe(true);
    expect(hostAllowed('127.0.0.5:9', hostAllowlist('127.0.0.1'))).toBe(false);
    expect(hostAllowed('[::1]:9', hostAllowlist('::1'))).toBe(true);
  });

  it('adds the configured names, compared without their port', () => {
    const allowed = hostAllowlist('localhost', ['tools.internal:8443', '[fd00::5]', 'GW.example']);
    for (const host of ['tools.internal', 'tools.internal:1', '[fd00::5]:80', 'gw.example']) expect(hostAllowed(host, allowed), host).toBe(true);
    expect(hostAllowed('other.internal', allowed)).toBe(false);
  });

  it('answers any name when not bound to loopback, and a request without Host (HTTP/1.0)', () => {
    expect(hostAllowed('rebound.example', hostAllowlist('0.0.0.0'))).toBe(true);
    expect(hostAllowed('rebound.example', hostAllowlist('192.168.1.4'))).toBe(true);
    expect(hostAllowed('anything.example', hostAllowlist('::'))).toBe(true);
    expect(hostAllowed(undefined, hostAllowlist('127.0.0.1'))).toBe(true);
  });

  it('decides the same header the same way every time, past its cache of decided headers', () => {
    const allowed = hostAllowlist('127.0.0.1');
    for (let i = 0; i < 200; i++) {
      expect(hostAllowed(`name-${i}.example`, allowed)).toBe(false);
      expect(hostAllowed(`localhost:${i}`, allowed)).toBe(true);
    }
  });

  it('namedHosts compares a given list the same way', () => {
    expect(hostAllowed('Dash.Local:4319', namedHosts(['dash.local']))).toBe(true);
    expect(isLoopbackHost('[::1]')).toBe(true);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
  });
});
