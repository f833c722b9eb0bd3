/**
 * When a cron schedule is due (pure; the clock is a parameter). `navi queue add --cron EXPR`
 * keeps a schedule, and every worker's tick asks `dueSlot` with the schedule's last slot: a
 * schedule fires once for the latest slot it missed (a worker fleet that was down all night
 * starts one run in the morning, not one per missed slot).
 */
import cronParser from 'cron-parser';
import { InvalidInputError } from '../errors.js';

/** Five fields (minute hour day month weekday) or six (with seconds first), as crontab and cron-parser take them. */
export function checkCron(expr: string): string {
  const text = expr.trim();
  const fields = text.split(/\s+/).length;
  if (text === '' || fields < 5 || fields > 6) {
    throw new InvalidInputError('flag_invalid', `--cron: give a cron expression of five fields, e.g. "0 2 * * *" for 02:00 every night (got '${expr}')`);
  }
  try {
    cronParser.parseExpression(text, { utc: true });
  } catch (err) {
    throw new InvalidInputError('flag_invalid', `--cron '${expr}' is not a cron expression: ${err instanceof Error ? err.message : String(err)}`);
  }
  return text;
}

/**
 * The latest slot of `expr` in (since, now], or null when none is due. Slots are in UTC unless the
 * expression is given a time zone (`tz`).
 */
export function dueSlot(expr: string, since: Date, now: Date, tz?: string): Date | null {
  // prev() from just after `now` is the latest slot at or before it.
  const it = cronParser.parseExpression(expr, { currentDate: new Date(now.getTime() + 1), ...(tz ? { tz } : { utc: true }) });
  const slot = it.prev().toDate();
  return slot.getTime() > since.getTime() ? slot : null;
}

/** The next slot after `now` (what `navi queue list` shows for a schedule). */
export function nextSlot(expr: string, now: Date, tz?: string): Date {
  return cronParser.parseExpression(expr, { currentDate: now, ...(tz ? { tz } : { utc: true }) }).next().toDate();
}
