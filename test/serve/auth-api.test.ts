/**
 * `navi serve` with a token given (issues 19, 35): 401 without it on REST and WebSockets, the
 * bearer header or a single-use ticket in the subprotocol list lets a WebSocket in, a given token
 * is never printed and no token file is written; bad flags are exit 2 before anything opens.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { scenario } from '../scenario/helpers.js';
import { serve, stopServe, subscribe, upgradeStatus } from './helpers.js';

const T = 120_000;
const TOKEN = 'tok-3f9a1c0e7b2d4a55';

describe('navi serve: authentication', () => {
  forEachBackend(
    (backend) => {
      it(
        'with a token every API request and WebSocket needs it; a ticket serves a browser; the token is never printed',
        async () => {
          const s = await scenario(backend, { turns: [] });
          const srv = await serve(s, [], { NAVI_SERVE_TOKEN: TOKEN });
          const listening = srv.proc.events.find((e) => e.type === 'serve_listening');
          expect(listening).toMatchObject({ token_required: true, token_file: null });
          for (const path of ['/health', '/sessions', '/agents', '/runs', '/openapi.json']) {
            expect(await srv.api('GET', path, undefined, { authorization: '' })).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
            expect(await srv.api('GET', path, undefined, { authorization: 'Bearer wrong' })).toMatchObject({ status: 401 });
            expect((await srv.api('GET', path, undefined, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
          }
          const id = String((await srv.api('POST', '/sessions', {}, { authorization: `Bearer ${TOKEN}` })).body.id);
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`)).toBe(401);
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}?token=${TOKEN}`)).toBe(401);
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { protocols: ['navi.v1', 'navi.ticket.forged'] })).toBe(401);
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { headers: { authorization: `Bearer ${TOKEN}` } })).toBe(101);
          // A browser: a ticket from an authenticated POST, as a subprotocol; single use.
          const ticket = await srv.api('POST', '/ws-tickets', undefined, { authorization: `Bearer ${TOKEN}` });
          expect(ticket.status).toBe(201);
          const sub = await subscribe(srv.url, `/ws/sessions/${id}`, { protocols: ['navi.v1', `navi.ticket.${String(ticket.body.ticket)}`] });
          expect(sub.ws.protocol).toBe('navi.v1');
          sub.ws.close();
          expect(await upgradeStatus(srv.url, `/ws/sessions/${id}`, { protocols: ['navi.v1', `navi.ticket.${String(ticket.body.ticket)}`] })).toBe(401);
          expect(await stopServe(srv)).toBe(130);
          const out = await srv.proc.result;
          expect(out.stdout + out.stderr).not.toContain(TOKEN);
          // A given token is not written anywhere.
          const { existsSync } = await import('node:fs');
          expect(existsSync(`${String(s.db.env.NAVI_DATA_DIR)}/navi-serve-token`)).toBe(false);
        },
        T,
      );
    },
  );

  it.each([
    [['--token', 'short'], /the serve token must have at least 16 characters/],
    [['--allowed-host', 'http://navi.example'], /--allowed-host http:\/\/navi\.example: give a host name/],
    [['--allowed-host', 'navi.example:8080'], /--allowed-host navi\.example:8080: give a host name/],
  ])(
    '%j is exit 2 before anything opens',
    async (flags, message) => {
      const { cleanEnv, makeTempDir, runNavi } = await import('../support/cli.js');
      const cwd = makeTempDir('serve-flags');
      const data = `${cwd}/data`;
      const run = await runNavi(['serve', '--port', '0', ...flags], { cwd, env: cleanEnv({ NAVI_DATA_DIR: data }) });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      const { existsSync } = await import('node:fs');
      expect(existsSync(data)).toBe(false);
    },
    T,
  );
});
