/**
 * Notify URLs as written (issue 19): `${VAR}` expansion when sending, the redacted form shown
 * everywhere else, the check of a URL as written, and which payload shape a URL gets.
 */
import { describe, expect, it } from 'vitest';
import { notifyUrlProblem } from '../../src/config/notify-schema.js';
import { classifyUrl } from '../../src/notify/classify.js';
import { expandUrl, redactUrl, urlVariables } from '../../src/notify/url.js';

describe('redactUrl: scheme and host only', () => {
  it.each([
    ['https://hooks.slack.com/services/T000/B000/XXXX', 'https://hooks.slack.com'],
    ['https://discord.com/api/webhooks/123/tok-en', 'https://discord.com'],
    ['http://127.0.0.1:9000/hook?token=abc#frag', 'http://127.0.0.1:9000'],
    ['HTTPS://user:pass@example.com/x', 'https://example.com'],
    ['https://example.com?k=secret', 'https://example.com'],
    ['${SLACK_HOOK}', '${SLACK_HOOK}'],
    ['${BASE}/path/${TOKEN}', '${BASE}'],
    ['https://${HOST}/x/${TOKEN}', 'https://${HOST}'],
    ['not a url at all', '(notify URL)'],
  ])('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });
});

describe('expandUrl: ${VAR} from the environment, when sending', () => {
  const env = { HOOK: 'T1/B2/s3cr3t', HOST: 'example.com', EMPTY: '' };
  it.each([
    ['https://hooks.slack.com/services/${HOOK}', { ok: true, url: 'https://hooks.slack.com/services/T1/B2/s3cr3t' }],
    ['https://${HOST}/a?b=${HOOK}', { ok: true, url: 'https://example.com/a?b=T1/B2/s3cr3t' }],
    ['https://x/${MISSING}/${EMPTY}/${MISSING}', { ok: false, missing: ['MISSING', 'EMPTY'] }],
    ['https://plain.example/no/vars', { ok: true, url: 'https://plain.example/no/vars' }],
    ['https://x/$HOOK/${ not a ref', { ok: true, url: 'https://x/$HOOK/${ not a ref' }],
  ])('%s', (url, expected) => {
    expect(expandUrl(url, env)).toEqual(expected);
  });

  it('lists the variables a URL refers to, once each', () => {
    expect(urlVariables('https://${A}/${B}/${A}')).toEqual(['A', 'B']);
    expect(urlVariables('https://x/y')).toEqual([]);
  });
});

describe('notifyUrlProblem: a URL as written', () => {
  it.each([
    ['https://hooks.slack.com/services/${HOOK}', undefined],
    ['http://127.0.0.1:8080/n', undefined],
    ['${HOOK}', undefined],
    ['${BASE}/discord', undefined],
    ['ftp://example.com/x', 'must be an http:// or https:// URL (`${VAR}` references are expanded when sending)'],
    ['hooks.slack.com/services/x', 'must be an http:// or https:// URL (`${VAR}` references are expanded when sending)'],
    ['https://x/${1BAD}', 'has a "${" that does not start a ${NAME} reference'],
  ])('%s', (url, problem) => {
    expect(notifyUrlProblem(url)).toBe(problem);
  });
});

describe('classifyUrl: the payload shape by host', () => {
  it.each([
    ['https://hooks.slack.com/services/T/B/X', 'slack'],
    ['https://HOOKS.SLACK.COM/services/T/B/X', 'slack'],
    ['https://discord.com/api/webhooks/1/abc', 'discord'],
    ['https://discordapp.com/api/webhooks/1/abc', 'discord'],
    ['https://discord.com/channels/1', 'generic'],
    ['https://slack.com/api/chat.postMessage', 'generic'],
    ['https://hooks.slack.com.evil.example/x', 'generic'],
    ['http://127.0.0.1:9000/hook', 'generic'],
    ['not a url', 'generic'],
  ])('%s → %s', (url, format) => {
    expect(classifyUrl(url)).toBe(format);
  });
});
