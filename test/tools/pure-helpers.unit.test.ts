import { describe, expect, it } from 'vitest';
import { HeadTailCollector, capText } from '../../src/tools/output-cap.js';
import { createRedactor, redactAfterCut, redactBeforeCut, secretRules, type SecretRule } from '../../src/tools/redact.js';

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

describe('secretRules: what one environment variable contributes', () => {
  const tag = (name: string): string => `[REDACTED:${name}]`;
  const whole = (name: string, value: string): SecretRule => ({ find: value, replacement: tag(name) });
  const cases: Array<[string, string, string, SecretRule[]]> = [
    ['a secret-looking name: the whole value', 'GITHUB_TOKEN', 'ghp_tokenvalue', [whole('GITHUB_TOKEN', 'ghp_tokenvalue')]],
    ['PASSWD counts too', 'SMTP_PASSWD', 'hunter22', [whole('SMTP_PASSWD', 'hunter22')]],
    ['a short value is never redacted on its own', 'API_KEY', 'abc', []],
    ['an ordinary name and value: nothing', 'HOME', '/home/someone', []],
    ['a URL without a password: nothing', 'OLLAMA_HOST', 'http://127.0.0.1:11434', []],
    ['a URL with a user only: nothing', 'MIRROR', 'https://user@mirror.example/x', []],
    ['DATABASE_URL: the whole value, even without a password', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/app', [whole('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/app')]],
    [
      'DATABASE_URL with a password: the whole value and the password',
      'DATABASE_URL',
      'postgres://app:pg-pass-123@db:5432/app',
      [whole('DATABASE_URL', 'postgres://app:pg-pass-123@db:5432/app'), whole('DATABASE_URL', 'pg-pass-123')],
    ],
    ['any name with a URL password: the password', 'OLLAMA_HOST', 'http://navi:ollama-pass@gpu:11434', [whole('OLLAMA_HOST', 'ollama-pass')]],
    ['a short URL password: redacted where it stands', 'OLLAMA_HOST', 'http://u:p@h', [{ find: ':p@', replacement: ':[REDACTED:OLLAMA_HOST]@' }]],
    ['a percent-encoded password: as written and decoded', 'PIP_INDEX_URL', 'https://me:p%40ss%2Fword@pypi.example/simple', [whole('PIP_INDEX_URL', 'p%40ss%2Fword'), whole('PIP_INDEX_URL', 'p@ss/word')]],
    ['a password holding a slash', 'REPO', 'https://me:ab/cd/ef@git.example/r.git', [whole('REPO', 'ab/cd/ef')]],
    ['several URLs in one value', 'MIRRORS', 'http://a:first-pass@h1 http://b:second-pass@h2', [whole('MIRRORS', 'first-pass'), whole('MIRRORS', 'second-pass')]],
    ['a password= query parameter', 'PG_DSN', 'postgres://db/app?sslmode=require&password=query-pass-1', [whole('PG_DSN', 'query-pass-1')]],
    ['an @ in the query is not a password', 'FEED', 'https://feed.example/x?mail=a:b@c', []],
  ];
  it.each(cases)('%s', (_what, name, value, rules) => {
    expect(secretRules(name, value)).toEqual(rules);
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

  it('redacts DATABASE_URL and passwords in any URL-valued variable', () => {
    const r = createRedactor({ DATABASE_URL: 'postgres://app:pg-pass-123@db:5432/app', OLLAMA_HOST: 'http://u:p@gpu:11434', PATH: '/bin' });
    expect(r('DATABASE_URL=postgres://app:pg-pass-123@db:5432/app\nOLLAMA_HOST=http://u:p@gpu:11434\nPATH=/bin')).toBe(
      'DATABASE_URL=[REDACTED:DATABASE_URL]\nOLLAMA_HOST=http://u:[REDACTED:OLLAMA_HOST]@gpu:11434\nPATH=/bin',
    );
    expect(r('password is pg-pass-123')).toBe('password is [REDACTED:DATABASE_URL]');
  });

  it('is the identity without secrets', () => {
    expect(createRedactor({ PATH: '/bin' })('text')).toBe('text');
  });
});

describe('redaction at a cut', () => {
  const redact = createRedactor({ API_TOKEN: 's3cr3t-value-xyz', DB_PASSWORD: 'hunter22' });

  it('knows the longest secret', () => {
    expect(redact.maxSecretLength).toBe(16);
    expect(createRedactor({}).maxSecretLength).toBe(0);
  });

  it.each([
    ['xxxxs3cr3t-val', 'xxxx'],
    ['xxxxs', 'xxxx'],
    ['xxxxhunter2', 'xxxx'],
    ['xxxx s3cr3t-value-xyz', 'xxxx [REDACTED:API_TOKEN]'],
    ['xxxx s3cr3t-value-xyz s3cr', 'xxxx [REDACTED:API_TOKEN] '],
    ['nothing secret here', 'nothing secret here'],
    ['', ''],
  ])('before a cut: %j → %j', (text, expected) => {
    expect(redact.beforeCut(text)).toBe(expected);
    expect(redactBeforeCut(redact, text)).toBe(expected);
  });

  it.each([
    ['value-xyzyyyy', 'yyyy'],
    ['zyyyy', 'yyyy'],
    ['er22 and then', ' and then'],
    ['hunter22 yyyy', '[REDACTED:DB_PASSWORD] yyyy'],
    ['nothing secret here', 'nothing secret here'],
  ])('after a cut: %j → %j', (text, expected) => {
    expect(redact.afterCut(text)).toBe(expected);
    expect(redactAfterCut(redact, text)).toBe(expected);
  });

  it('a plain redact function only redacts', () => {
    const plain = (t: string): string => t.replace('hunter22', '[X]');
    expect(redactBeforeCut(plain, 'a hunter22 hunt')).toBe('a [X] hunt');
    expect(redactAfterCut(plain, 'er22 hunter22')).toBe('er22 [X]');
  });

  it('HeadTailCollector leaves no piece of a secret the cap split, on either side', () => {
    const c = new HeadTailCollector(64);
    c.push(Buffer.from(`${'x'.repeat(20)}s3cr3t-value-xyz${'y'.repeat(200)}s3cr3t-value-xyz${'z'.repeat(20)}`));
    const text = c.text(redact);
    expect(text).toMatch(/^x{20}\n\[… \d+ bytes omitted …\]\n/);
    expect(text).toMatch(/z{20}$/);
    for (let n = 3; n <= 16; n++) {
      const secret = 's3cr3t-value-xyz';
      expect(text).not.toContain(secret.slice(0, n));
      expect(text).not.toContain(secret.slice(-n));
    }
  });

  it('HeadTailCollector keeps memory bounded and redacts a 100 MB stream', () => {
    const c = new HeadTailCollector(1024);
    const chunk = Buffer.from(`${'a'.repeat(1000)}hunter22`);
    for (let i = 0; i < 100_000; i++) c.push(chunk);
    const text = c.text(redact);
    expect(c.totalBytes).toBe(100_800_000);
    expect(Buffer.byteLength(text)).toBeLessThan(1200);
    expect(text).not.toMatch(/hunter|er22|r22$/);
  });
});
