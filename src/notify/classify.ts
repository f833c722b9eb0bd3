/**
 * Which payload shape a webhook takes, from its (expanded) URL: Slack's incoming webhooks live
 * on hooks.slack.com, Discord's under discord.com/api/webhooks; anything else gets navi's own
 * JSON. A target's `format` overrides the guess (a relay in front of Slack, a test receiver).
 */
import type { NotifyFormat } from '../config/notify-schema.js';

/** Decides a URL's payload shape (injectable: tests point Slack-shaped targets at 127.0.0.1). */
export type UrlClassifier = (url: string) => NotifyFormat;

const SLACK_HOSTS = new Set(['hooks.slack.com', 'hooks.slack-gov.com']);
const DISCORD_HOSTS = new Set(['discord.com', 'discordapp.com', 'ptb.discord.com', 'canary.discord.com']);

/** The shape a URL's host and path call for. */
export const classifyUrl: UrlClassifier = (url) => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'generic';
  }
  const host = parsed.hostname.toLowerCase();
  if (SLACK_HOSTS.has(host)) return 'slack';
  if (DISCORD_HOSTS.has(host) && parsed.pathname.startsWith('/api/webhooks/')) return 'discord';
  return 'generic';
};
