import { describe, expect, it } from 'vitest';
import { HeadTailCollector, capText } from '../../src/tools/output-cap.js';
import { createRedactor } from '../../src/tools/redact.js';

describe('capText', () => {
  it('returns text within the cap unchanged', () => {
    expect(capText('hello', 5)).toBe('hello');
    expect(capText('', 0)).toBe('');
  });

  it('keeps head and tail around a marker counting the omitted bytes, within the cap', () => {
    const text = `HEAD${'x'.repeat(10_000)}TAIL`;
    const capped = capText(text, 200);
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(200);
    expect(capped.startsWith('HEAD')).toBe(true);
    expect(capped.endsWith('TAIL')).toBe(true);
    const omitted = Number(/\[… (\d+) bytes omitted …\]/.exec(capped)?.[1]);
    const kept = Buffer.byteLength(capped.replace(/\n\[… \d+ bytes omitted …\]\n/, ''));
    expect(kept + omitted).toBe(Buffer.byteLength(text));
  });

  it('never splits a multi-byte character', () => {
    const text = 'é'.repeat(5000) + '😀'.repeat(5000);
    const capped = capText(text, 1001);
    expect(capped).not.toContain('\uFFFD');
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(1001);
  });
});

describe('HeadTailCollector', () => {
  it('keeps everything when under the cap', () => {
    const c = new HeadTailCollector(100);
    c.push(Buffer.from('abc'));
    c.push(Buffer.from('def'));
    expect(c.text()).toBe('abcdef');
    expect(c.totalBytes).toBe(6);
  });

  it('keeps the first and last halves of a long stream', () => {
    const c = new HeadTailCollector(10);
    for (let i = 0; i < 1000; i++) c.push(Buffer.from(`${i % 10}`));
    c.push(Buffer.from('END'));
    const text = c.text();
    expect(text.startsWith('01234')).toBe(true);
    expect(text.endsWith('\n89END')).toBe(true);
    expect(text).toContain('[… 993 bytes omitted …]');
  });

  it('repairs characters cut at the head/tail seams', () => {
    const c = new HeadTailCollector(7);
    c.push(Buffer.from('€€€€€€€€€€'));
    expect(c.text()).not.toContain('\uFFFD');
  });
});

describe('createRedactor', () => {
  const env = {
    OPENAI_API_KEY: 'sk-abcdef123456',
    GITHUB_TOKEN: 'ghp_tokenvalue',
    DB_PASSWORD: 'hunter22',
    MY_SECRET_LONG: 'sk-abcdef123456-extended',
    SHORT_TOKEN: 'abc',
    HOME: '/home/someone',
    PATH: '/usr/bin',
    UNSET_KEY: undefined,
  };
  const redact = createRedactor(env);

  it.each([
    ['key=sk-abcdef123456 done', 'key=[REDACTED:OPENAI_API_KEY] done'],
    ['ghp_tokenvalue and hunter22', '[REDACTED:GITHUB_TOKEN] and [REDACTED:DB_PASSWORD]'],
    ['sk-abcdef123456-extended', '[REDACTED:MY_SECRET_LONG]'],
    ['abc is too short to redact', 'abc is too short to redact'],
    ['home is /home/someone', 'home is /home/someone'],
    ['twice: hunter22hunter22', 'twice: [REDACTED:DB_PASSWORD][REDACTED:DB_PASSWORD]'],
  ])('%j → %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it('escapes regex characters in values', () => {
    const r = createRedactor({ API_KEY: 'a.b*c(d)e$' });
    expect(r('x a.b*c(d)e$ y axbbc(d)e$')).toBe('x [REDACTED:API_KEY] y axbbc(d)e$');
  });

  it('is the identity without secrets', () => {
    expect(createRedactor({ PATH: '/bin' })('text')).toBe('text');
  });
});
