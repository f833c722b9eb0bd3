/**
 * A notify URL as written holds `${VAR}` references (issue 19): expanded only when a
 * notification is sent, never stored or printed expanded. What navi prints about a target is its
 * redacted form: scheme and host as written, no path or query (a Slack or Discord webhook's
 * secret is its path; other services put tokens in the query).
 */
import { VAR_REFERENCE } from '../config/notify-schema.js';

/** The URL with its `${VAR}`s filled in, or the names of the variables that are not set. */
export type Expanded = { ok: true; url: string } | { ok: false; missing: string[] };

/** Fills in `${VAR}` references from `env`; an unset or empty variable is missing. */
export function expandUrl(url: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const missing: string[] = [];
  const out = url.replace(VAR_REFERENCE, (_whole, name: string) => {
    const value = env[name];
    if (value === undefined || value === '') {
      if (!missing.includes(name)) missing.push(name);
      return '';
    }
    return value;
  });
  return missing.length > 0 ? { ok: false, missing } : { ok: true, url: out };
}

/** The variables a URL refers to, in order, once each. */
export function urlVariables(url: string): string[] {
  const names: string[] = [];
  for (const m of url.matchAll(VAR_REFERENCE)) if (m[1] !== undefined && !names.includes(m[1])) names.push(m[1]);
  return names;
}

export { redactUrl } from '../config/notify-schema.js';
