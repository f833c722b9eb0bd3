/**
 * Where a loop tells its user it needs them (issue 19): `notify: [{url, events?, format?}]` in
 * config files and task files. Lives in config/ because both schemas use it; the sending is
 * src/notify/. A URL in config may hold `${VAR}` references, kept as written (they are expanded
 * only when a notification is sent, so a webhook's secret never sits in a file, the store or the
 * output); a task file's may not (TaskNotifyListSchema).
 */
import { z } from 'zod';
import { oneOf } from './fields.js';

/** What a notification is about, most urgent first: a person must answer › the run failed › it ended. */
export const NOTIFY_EVENTS = ['waiting', 'failed', 'finished'] as const;

/** One notification kind. */
export type NotifyEventKind = (typeof NOTIFY_EVENTS)[number];

/** Payload shapes: Slack and Discord incoming webhooks, or navi's own JSON. */
export const NOTIFY_FORMATS = ['slack', 'discord', 'generic'] as const;

/** One payload shape. */
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

/** `${NAME}` references in a URL (POSIX-style names). */
export const VAR_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

const URL_HINT = 'must be an http:// or https:// URL (`${VAR}` references are expanded when sending)';

/**
 * Why a notify URL as written cannot be used, or undefined. `${VAR}` references stand for text
 * not known yet: each is checked as a placeholder, and a URL that is one reference is checked
 * only when sent.
 */
export function notifyUrlProblem(url: string): string | undefined {
  // Scheme and host still unknown (`${HOOK}`, `${BASE}/path`): checked once expanded.
  if (url.trim().startsWith('${')) return undefined;
  if (/\$\{(?![A-Za-z_][A-Za-z0-9_]*\})/.test(url)) return 'has a "${" that does not start a ${NAME} reference';
  let parsed: URL;
  try {
    parsed = new URL(url.replace(VAR_REFERENCE, 'x'));
  } catch {
    return URL_HINT;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return URL_HINT;
  return undefined;
}

/**
 * A URL to notify, checked as written. A bad one is named by its redacted form, and the
 * loader's "(got …)" is left off (`params.hideValue`): its path may be a webhook's secret.
 */
export function notifyUrlField() {
  return z.string({ error: URL_HINT }).superRefine((url, ctx) => {
    const problem = notifyUrlProblem(url);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `${problem} (got ${redactUrl(url)}…)`, params: { hideValue: true } });
  });
}
/**
 * What may be shown of a URL as written: `https://hooks.slack.com`. A host that is itself a
 * reference stays the reference (`${HOOK}` names a variable, not its value); user info, path,
 * query and fragment are dropped.
 */
export function redactUrl(url: string): string {
  const t = url.trim();
  const ref = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}/.exec(t);
  if (ref !== null) return ref[0];
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)/.exec(t);
  if (m === null) return '(notify URL)';
  const authority = m[2] ?? '';
  return `${(m[1] ?? '').toLowerCase()}${authority.slice(authority.lastIndexOf('@') + 1)}`;
}


/** One notify target. */
export const NotifyTargetSchema = z.strictObject({
  /** Where to POST; Slack and Discord webhook URLs are recognised by their host. */
  url: notifyUrlField(),
  /** Which notifications it gets (default: all). */
  events: z
    .array(oneOf(NOTIFY_EVENTS), { error: `must be a list of ${NOTIFY_EVENTS.map((e) => JSON.stringify(e)).join(', ')}` })
    .min(1, { error: 'must name at least one event (leave it out for all)' })
    .optional(),
  /** The payload shape, when the URL does not say (a relay in front of Slack, a test receiver). */
  format: oneOf(NOTIFY_FORMATS).optional(),
});

/** A notify list (config or task file). */
export const NotifyListSchema = z.array(NotifyTargetSchema, { error: 'must be a list of { url, events?, format? }' });

/**
 * Why a task file's URL holds no `${` (issue 35): variables are expanded only in the operator's
 * config and flags. A task file may come from a repository anyone can push to; expanded, its
 * `http://…?db=${DATABASE_URL}` would deliver the worker's secrets.
 */
export const TASK_VARIABLE_PROBLEM =
  'must not hold "${": a task file\'s notify URL is used as written (${VAR} is expanded only in your config\'s notify and --notify, never in a task file, which a repository may supply)';

/** A task file's notify list: as the config's, and no `${` in any URL. */
export const TaskNotifyListSchema = z.array(
  NotifyTargetSchema.superRefine((t, ctx) => {
    if (t.url.includes('${')) ctx.addIssue({ code: 'custom', path: ['url'], message: TASK_VARIABLE_PROBLEM, params: { hideValue: true } });
  }),
  { error: 'must be a list of { url, events?, format? }' },
);

/** One notify target as validated. */
export type NotifyTargetConfig = z.output<typeof NotifyTargetSchema>;
