/**
 * Who may talk to `navi serve`: whoever has its token. There is always one (given, or made and
 * kept in a file only the user can read: token-file.ts), and every API request carries
 * `Authorization: Bearer <token>`; Host, Origin and body rules come first (request-guard.ts). A browser cannot put that header on a WebSocket, and a token
 * in the URL would land in logs and history, so a WebSocket either sends the header (scripts) or
 * names a short-lived single-use ticket in its subprotocol list (`navi.ticket.<ticket>`), got
 * from POST /ws-tickets with the header. The token is compared in constant time and never printed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Subprotocol the server selects on every WebSocket (clients list it beside the ticket). */
export const WS_PROTOCOL = 'navi.v1';
/** Prefix of the subprotocol that carries a ticket. */
export const TICKET_PROTOCOL_PREFIX = 'navi.ticket.';
/** How long a ticket may wait for its WebSocket. */
export const TICKET_TTL_MS = 30_000;

/** The token from an `Authorization` header value (`Bearer T`), else null. */
export function bearerToken(header: string | undefined | null): string | null {
  if (header === undefined || header === null) return null;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m?.[1] ?? null;
}

/** Compares without leaking where two tokens differ (both hashed to the same length first). */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Tickets for WebSockets: single use, expiring. */
export class TicketBook {
  private readonly tickets = new Map<string, number>();

  constructor(private readonly ttlMs = TICKET_TTL_MS, private readonly now: () => number = Date.now) {}

  issue(): { ticket: string; expires_in_ms: number } {
    this.sweep();
    const ticket = randomBytes(24).toString('base64url');
    this.tickets.set(ticket, this.now() + this.ttlMs);
    return { ticket, expires_in_ms: this.ttlMs };
  }

  /** True once for a ticket issued less than the TTL ago; it is used up either way. */
  redeem(ticket: string): boolean {
    const until = this.tickets.get(ticket);
    this.tickets.delete(ticket);
    return until !== undefined && until >= this.now();
  }

  private sweep(): void {
    const now = this.now();
    for (const [t, until] of this.tickets) if (until < now) this.tickets.delete(t);
  }
}

/** The ticket named in a `Sec-WebSocket-Protocol` header (comma-separated list), else null. */
export function ticketFromProtocols(header: string | undefined): string | null {
  for (const p of (header ?? '').split(',')) {
    const t = p.trim();
    if (t.startsWith(TICKET_PROTOCOL_PREFIX) && t.length > TICKET_PROTOCOL_PREFIX.length) return t.slice(TICKET_PROTOCOL_PREFIX.length);
  }
  return null;
}

/** Decides whether a request may go on. */
export class Gate {
  readonly tickets = new TicketBook();

  constructor(private readonly token: string) {}

  /** An API request: the bearer header. */
  allowsRequest(authorization: string | undefined | null): boolean {
    const given = bearerToken(authorization);
    return given !== null && sameToken(given, this.token);
  }

  /** A WebSocket upgrade: the bearer header, or a ticket in the subprotocol list. */
  allowsUpgrade(authorization: string | undefined, protocols: string | undefined): boolean {
    if (this.allowsRequest(authorization)) return true;
    const ticket = ticketFromProtocols(protocols);
    return ticket !== null && this.tickets.redeem(ticket);
  }
}
