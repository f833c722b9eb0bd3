/**
 * The rules in front of `navi serve`'s token (issue 35), table-driven: which Host names are its
 * own, which Origins are its own page's, which bodies get through, what `--allowed-host` takes;
 * and the kept token file (made 0600, reused, replaced when not trustworthy).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  checkBodyHeaders,
  checkHost,
  checkOrigin,
  isLoopbackHost,
  parseAllowedHost,
  parseHostHeader,
  type BodyHeaders,
  type HostPolicy,
} from '../../src/serve/request-guard.js';
import { keepToken, TOKEN_FILE, untrustedBecause } from '../../src/serve/token-file.js';

const loopback: HostPolicy = { bound: '127.0.0.1', allowed: [], localAddresses: () => ['127.0.0.1', '192.168.1.5', 'fe80::1'] };
const wildcard: HostPolicy = { ...loopback, bound: '0.0.0.0' };
const named: HostPolicy = { ...loopback, allowed: ['navi.example', '.lan.example'] };
const anyHost: HostPolicy = { ...loopback, allowed: ['*'] };
const boundLan: HostPolicy = { ...loopback, bound: '192.168.1.5' };

describe('the Host rule', () => {
  it.each([
    ['127.0.0.1:7777', loopback, true],
    ['127.0.0.1', loopback, true],
    ['localhost:7777', loopback, true],
    ['LOCALHOST:7777', loopback, true],
    ['[::1]:7777', loopback, true],
    ['127.9.9.9:7777', loopback, true],
    ['2130706433:7777', loopback, true], // a browser writes it 127.0.0.1
    ['attacker.example', loopback, false],
    ['attacker.example:7777', loopback, false],
    ['localhost.attacker.example:7777', loopback, false],
    ['127.0.0.1.nip.io:7777', loopback, false],
    ['localhost.:7777', loopback, false],
    ['sub.localhost:7777', loopback, false],
    ['192.168.1.5:7777', loopback, false],
    ['', loopback, false],
    [undefined, loopback, false],
    ['a b', loopback, false],
    ['user@127.0.0.1', loopback, false],
    ['127.0.0.1/x', loopback, false],
    ['192.168.1.5:7777', boundLan, true],
    ['192.168.1.6:7777', boundLan, false],
    ['192.168.1.5:7777', wildcard, true],
    ['[fe80::1]:7777', wildcard, true],
    ['10.0.0.9:7777', wildcard, false],
    ['box.example:7777', wildcard, false],
    ['navi.example', named, true],
    ['NAVI.example:443', named, true],
    ['x.navi.example', named, false],
    ['lan.example', named, true],
    ['a.b.lan.example:8080', named, true],
    ['evillan.example', named, false],
    ['navi.example.evil', named, false],
    ['anything.example:1', anyHost, true],
  ])('%s (bound %s) → %s', (host, policy, allowed) => {
    const refused = checkHost(host, policy);
    expect(refused === null).toBe(allowed);
    if (refused !== null) expect(refused).toMatchObject({ status: 403, code: 'host_not_allowed' });
  });

  it('asks for the local addresses only when bound to every interface and nothing else matched', () => {
    let asked = 0;
    const counting = (bound: string): HostPolicy => ({ bound, allowed: [], localAddresses: () => (asked++, ['10.1.1.1']) });
    expect(checkHost('10.1.1.1:7777', counting('127.0.0.1'))).not.toBeNull();
    expect(checkHost('127.0.0.1:7777', counting('0.0.0.0'))).toBeNull();
    expect(asked).toBe(0);
    expect(checkHost('10.1.1.1:7777', counting('::'))).toBeNull();
    expect(asked).toBe(1);
  });
});

describe('the Origin rule', () => {
  it.each([
    [undefined, '127.0.0.1:7777', true],
    ['http://127.0.0.1:7777', '127.0.0.1:7777', true],
    ['http://localhost:7777', 'localhost:7777', true],
    ['http://[::1]:7777', '[::1]:7777', true],
    ['https://navi.example', 'navi.example', true],
    ['http://navi.example', 'navi.example:80', true],
    ['http://localhost:7777', '127.0.0.1:7777', false],
    ['http://127.0.0.1:7778', '127.0.0.1:7777', false],
    ['http://evil.example', '127.0.0.1:7777', false],
    ['http://attacker.example:7777', 'attacker.example:7777', true], // the Host rule refuses this one
    ['null', '127.0.0.1:7777', false],
    ['file://', '127.0.0.1:7777', false],
    ['chrome-extension://abc', '127.0.0.1:7777', false],
    ['http://127.0.0.1:7777/path', '127.0.0.1:7777', false],
    ['http://u:p@127.0.0.1:7777', '127.0.0.1:7777', false],
    ['garbage', '127.0.0.1:7777', false],
    ['http://127.0.0.1:7777', undefined, false],
  ])('Origin %s, Host %s → %s', (origin, host, allowed) => {
    const refused = checkOrigin(origin, host);
    expect(refused === null).toBe(allowed);
    if (refused !== null) expect(refused).toMatchObject({ status: 403, code: 'origin_not_allowed' });
  });
});

describe('the body rule', () => {
  const LIMIT = 1000;
  it.each<[string, BodyHeaders, number | null]>([
    ['no body', {}, null],
    ['an empty body of any type', { contentType: 'text/plain', contentLength: '0' }, null],
    ['JSON', { contentType: 'application/json', contentLength: '10' }, null],
    ['JSON with a charset', { contentType: 'Application/JSON; charset=utf-8', contentLength: '10' }, null],
    ['JSON at the limit', { contentType: 'application/json', contentLength: '1000' }, null],
    ['JSON streamed', { contentType: 'application/json', transferEncoding: 'chunked' }, null],
    ['text/plain (a no-cors simple request)', { contentType: 'text/plain', contentLength: '10' }, 415],
    ['a form', { contentType: 'application/x-www-form-urlencoded', contentLength: '10' }, 415],
    ['multipart', { contentType: 'multipart/form-data; boundary=x', contentLength: '10' }, 415],
    ['no type', { contentLength: '10' }, 415],
    ['a look-alike', { contentType: 'application/jsonp', contentLength: '10' }, 415],
    ['text/plain streamed', { contentType: 'text/plain', transferEncoding: 'chunked' }, 415],
    ['JSON above the limit', { contentType: 'application/json', contentLength: '1001' }, 413],
    ['JSON, 200 MB declared', { contentType: 'application/json', contentLength: String(200 * 1024 * 1024) }, 413],
    ['a length that is not a number', { contentType: 'application/json', contentLength: 'x' }, 413],
  ])('%s → %s', (_name, headers, status) => {
    expect(checkBodyHeaders(headers, LIMIT)?.status ?? null).toBe(status);
  });
});

describe('--allowed-host values', () => {
  it.each([
    ['navi.example', 'navi.example'],
    ['NAVI.Example', 'navi.example'],
    ['.lan.example', '.lan.example'],
    ['*', '*'],
    ['192.168.1.5', '192.168.1.5'],
    ['::1', '::1'],
    ['http://navi.example', null],
    ['navi.example:8080', null],
    ['navi.example/x', null],
    ['', null],
    ['.', null],
    ['.192.168.1.5', null],
    ['a b', null],
  ])('%s → %s', (value, parsed) => expect(parseAllowedHost(value)).toBe(parsed));

  it('parses Host headers as browsers write them', () => {
    expect(parseHostHeader('[::1]:7777')).toEqual({ hostname: '::1', host: '[::1]:7777' });
    expect(parseHostHeader('Example.COM:80')).toEqual({ hostname: 'example.com', host: 'example.com' });
    expect(parseHostHeader('x/y')).toBeNull();
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.5', false],
    ['example.com', false],
    ['128.0.0.1', false],
  ])('%s → %s', (host, loopbackHost) => expect(isLoopbackHost(host)).toBe(loopbackHost));
});

describe('the kept token file', () => {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const scratch = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  };
  const fresh = (): string => join(scratch('navi-token-'), 'pgdata');

  it('is made 0600 in a private directory, then reused', () => {
    const dir = fresh();
    const a = keepToken(dir);
    expect(a.state).toBe('created');
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(a.file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(a.file, 'utf8')).toBe(`${a.token}\n`);
    const b = keepToken(dir);
    expect(b).toEqual({ token: a.token, file: a.file, state: 'kept' });
  });

  it.each([
    ['readable by others', (file: string) => chmodSync(file, 0o644), /others could read or change it \(mode 644\)/],
    [
      'a symbolic link',
      (file: string, dir: string) => {
        unlinkSync(file);
        writeFileSync(join(dir, 'navi-elsewhere'), 'A'.repeat(43), { mode: 0o600 });
        symlinkSync(join(dir, 'navi-elsewhere'), file);
      },
      /symbolic link/,
    ],
    ['not a token', (file: string) => writeFileSync(file, 'short', { mode: 0o600 }), /does not hold a token/],
  ])('is replaced when %s', (_name, plant, why) => {
    const dir = fresh();
    const file = keepToken(dir).file;
    const old = readFileSync(file, 'utf8').trim();
    plant(file, dir);
    const got = keepToken(dir);
    expect(got.state).toBe('replaced');
    expect(got.why).toMatch(why);
    expect(got.token).not.toBe(old);
    expect(statSync(got.file).mode & 0o777).toBe(0o600);
  });

  it.each([
    [{ isFile: () => true, uid: 1000, mode: 0o100600 }, 1000, null],
    [{ isFile: () => true, uid: 1000, mode: 0o100640 }, 1000, /others could read/],
    [{ isFile: () => true, uid: 1000, mode: 0o100602 }, 1000, /others could read/],
    [{ isFile: () => true, uid: 65534, mode: 0o100600 }, 1000, /belongs to uid 65534/],
    [{ isFile: () => false, uid: 1000, mode: 0o010600 }, 1000, /not a regular file/],
    [{ isFile: () => true, uid: 65534, mode: 0o100600 }, undefined, null],
  ])('stat %o as uid %s → %s', (st, who, why) => {
    const got = untrustedBecause(st, who);
    if (why === null) expect(got).toBeNull();
    else expect(got).toMatch(why);
  });

  it('refuses a directory that is not navi’s', () => {
    const dir = scratch('navi-token-foreign-');
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    expect(() => keepToken(dir)).toThrow(/is not a navi data directory/);
    expect(() => readFileSync(join(dir, TOKEN_FILE))).toThrow();
  });

  it.skipIf(uid === undefined)('names the uid in the reason when the directory is not yours', () => {
    const dir = fresh();
    keepToken(dir);
    expect(() => keepToken(dir, (uid ?? 0) + 1)).toThrow(/belongs to uid \d+, not to you/);
  });
});
