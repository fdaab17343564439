import { describe, expect, test } from 'vitest';
import {
  forwardRules,
  hostsFile,
  needsLowPorts,
  parseNetAllowlist,
} from '../../src/isolation/sandbox/net-allowlist.ts';

describe('permissions.net list', () => {
  test('names and loopback addresses, normalised and deduplicated', () => {
    const targets = parseNetAllowlist(['API.example.com:443', 'api.example.com:443', '127.0.0.1:8080', '[::1]:9000']);
    expect(targets.map((t) => t.key)).toEqual(['api.example.com:443', '127.0.0.1:8080', '[::1]:9000']);
  });

  test('entries the sandbox cannot reach transparently, or that are not host:port, are refused with the reason', () => {
    expect(() => parseNetAllowlist(['10.1.2.3:80'])).toThrow(/outside 127.0.0.0\/8; list the host by name/);
    expect(() => parseNetAllowlist(['[2001:db8::1]:80'])).toThrow(/IPv6 address other than \[::1\]/);
    expect(() => parseNetAllowlist(['example.com'])).toThrow(/must be "host:port"/);
    expect(() => parseNetAllowlist(['example.com:70000'])).toThrow(/port outside 1-65535/);
    expect(() => parseNetAllowlist(['exa mple.com:80'])).toThrow(/must be "host:port"|invalid host name/);
    expect(() => parseNetAllowlist(['-bad-.com:80'])).toThrow(/invalid host name/);
    expect(() => parseNetAllowlist([42])).toThrow(/must be a "host:port" string/);
  });

  test('each name gets a loopback address of its own inside the sandbox, skipping addresses listed literally', () => {
    const { rules, hosts } = forwardRules(
      parseNetAllowlist(['127.0.0.2:80', 'a.example:443', 'b.example:443', 'a.example:8443']),
    );
    expect(hosts).toEqual(
      new Map([
        ['a.example', '127.0.0.3'],
        ['b.example', '127.0.0.4'],
      ]),
    );
    expect(rules).toEqual([
      { listenHost: '127.0.0.2', port: 80, target: '127.0.0.2:80' },
      { listenHost: '127.0.0.3', port: 443, target: 'a.example:443' },
      { listenHost: '127.0.0.4', port: 443, target: 'b.example:443' },
      { listenHost: '127.0.0.3', port: 8443, target: 'a.example:8443' },
    ]);
    expect(hostsFile(hosts)).toBe('127.0.0.1 localhost\n::1 localhost\n127.0.0.3 a.example\n127.0.0.4 b.example\n');
  });

  test('a listed localhost points at its forwarder, not at 127.0.0.1', () => {
    const { hosts } = forwardRules(parseNetAllowlist(['localhost:8080']));
    expect(hostsFile(hosts)).toBe('127.0.0.2 localhost\n');
  });

  test('ports below 1024 are flagged (the forwarder then needs CAP_NET_BIND_SERVICE)', () => {
    expect(needsLowPorts(parseNetAllowlist(['a.example:8080']))).toBe(false);
    expect(needsLowPorts(parseNetAllowlist(['a.example:443']))).toBe(true);
  });
});
