/**
 * `navi serve`, sessions (issue 19): REST and WebSocket over real HTTP against the fake Ollama,
 * the built CLI as the server, on both backends. Two subscribers see identical ordered streams;
 * a late one catches up on the current turn; 409 while a turn runs, 404, 400 naming the field;
 * stop during prefill ends the turn and keeps the user's message; SIGTERM saves and exits 130.
 */
import { describe, expect, it } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { forEachBackend } from '../support/databases.js';
import { scenario } from '../scenario/helpers.js';
import { eventually, serve, stopServe, subscribe } from './helpers.js';

const T = 150_000;

const isResult = (f: Record<string, unknown>): boolean => f.type === 'result';

describe('navi serve: sessions', () => {
  forEachBackend((backend) => {
    it(
      'a turn streams the same ordered events to two subscribers; a late one catches up; REST shows the display buffer',
      async () => {
        const s = await scenario(backend, { turns: [{ thinking: 'Greeting the user.', content: 'Hello from navi, streamed in pieces.' }] });
        const srv = await serve(s);
        const health = await srv.api('GET', '/health');
        expect(health).toMatchObject({ status: 200, body: { ok: true, backend: backend.kind === 'pglite' ? 'pglite' : 'postgres' } });

        const created = await srv.api('POST', '/sessions', {});
        expect(created.status).toBe(201);
        const id = String(created.body.id);
        expect(created.body).toMatchObject({ profile: 'default', status: 'idle', stored: false });

        const a = await subscribe(srv.url, `/ws/sessions/${id}`, { headers: srv.auth });
        const b = await subscribe(srv.url, `/ws/sessions/${id}`, { headers: srv.auth });
        const release = s.fake.holdChats();
        const posted = await srv.api('POST', `/sessions/${id}/messages`, { content: 'say hello' });
        expect(posted).toMatchObject({ status: 202, body: { accepted: true, session_id: id, first_seq: 0 } });
        // While the turn runs: a second message is refused.
        await a.waitFor((f) => f.type === 'run_started', 'run_started');
        const busy = await srv.api('POST', `/sessions/${id}/messages`, { content: 'again' });
        expect(busy).toMatchObject({ status: 409, body: { error: { code: 'busy' } } });
        // A late subscriber joins mid-turn.
        const late = await subscribe(srv.url, `/ws/sessions/${id}`, { headers: srv.auth });
        release();
        await Promise.all([a, b, late].map((sub) => sub.waitFor(isResult, 'result')));

        expect(a.frames.map((f) => f.seq)).toEqual(a.frames.map((_, i) => i));
        expect(b.frames).toEqual(a.frames);
        expect(late.frames).toEqual(a.frames);
        expect(a.frames.flatMap((f) => validateEvent(f))).toEqual([]);
        expect(new Set(a.frames.map((f) => f.session_id))).toEqual(new Set([id]));
        expect(a.frames.filter((f) => f.type === 'text_delta').map((f) => f.text).join('')).toBe('Hello from navi, streamed in pieces.');
        expect(a.frames.at(-1)).toMatchObject({ type: 'result', status: 'success', exit_code: 0, result: 'Hello from navi, streamed in pieces.' });

        const shown = await srv.api('GET', `/sessions/${id}`);
        expect(shown.status).toBe(200);
        expect(shown.body).toMatchObject({ id, stored: true, status: 'idle', title: 'say hello' });
        const messages = (shown.body.messages as Array<Record<string, unknown>>).map((m) => [m.role, m.content]);
        expect(messages[0]).toEqual(['user', 'say hello']);
        expect(messages.at(-1)).toEqual(['assistant', 'Hello from navi, streamed in pieces.']);
        const listed = await srv.api('GET', '/sessions');
        expect((listed.body.sessions as Array<Record<string, unknown>>).map((x) => x.id)).toContain(id);

        expect(await srv.api('DELETE', `/sessions/${id}`)).toMatchObject({ status: 200, body: { deleted: true } });
        expect(await srv.api('GET', `/sessions/${id}`)).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
        expect(await stopServe(srv)).toBe(130);
      },
      T,
    );

    it(
      '404, 400 naming the field, unknown profile, agents and the OpenAPI document',
      async () => {
        const s = await scenario(backend, { turns: [] });
        const srv = await serve(s);
        expect(await srv.api('GET', '/sessions/nope')).toMatchObject({ status: 404, body: { error: { code: 'not_found', message: "no session 'nope'" } } });
        expect(await srv.api('POST', '/sessions/nope/messages', { content: 'x' })).toMatchObject({ status: 404 });
        expect(await srv.api('GET', '/runs/run_nope')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
        expect(await srv.api('POST', '/runs/run_nope/decisions', { decision: 'continue' })).toMatchObject({ status: 404 });
        expect(await srv.api('GET', '/nothing/here')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
        const id = String((await srv.api('POST', '/sessions', {})).body.id);
        expect(await srv.api('POST', `/sessions/${id}/messages`, { content: '' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_body', message: expect.stringMatching(/^content: /) as unknown } } });
        expect(await srv.api('POST', `/sessions/${id}/messages`, { text: 'hi' })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/text|content/) as unknown } } });
        expect(await srv.api('POST', `/sessions/${id}/messages`, '{not json')).toMatchObject({ status: 400, body: { error: { code: 'invalid_body', message: 'body: not valid JSON' } } });
        expect(await srv.api('POST', '/sessions', { profile: 'nope' })).toMatchObject({ status: 400, body: { error: { code: 'profile_not_found' } } });
        expect(await srv.api('POST', '/runs', { task: 'x', max_iterations: 0 })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/^max_iterations: /) as unknown } } });
        const agents = await srv.api('GET', '/agents');
        expect((agents.body.agents as Array<Record<string, unknown>>).find((p) => p.id === 'default')).toMatchObject({ description: expect.any(String) as unknown, tools: expect.arrayContaining(['read_file']) as unknown });
        const doc = await srv.api('GET', '/openapi.json');
        expect(doc.body).toMatchObject({ openapi: '3.1.0' });
        const paths = doc.body.paths as Record<string, Record<string, unknown>>;
        expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/health', '/sessions', '/sessions/{id}', '/sessions/{id}/messages', '/sessions/{id}/stop', '/agents', '/runs', '/runs/{id}', '/runs/{id}/decisions', '/runs/{id}/stop']) as unknown);
        expect(JSON.stringify(paths['/sessions/{id}/messages'])).toContain('"content"');
        expect(await stopServe(srv)).toBe(130);
      },
      T,
    );

    it(
      'stop during prefill ends the turn (interrupted) and keeps the user\'s message; SIGTERM mid-turn saves and exits 130',
      async () => {
        const s = await scenario(backend, { turns: [{ content: 'never sent' }, { content: 'never sent either' }] });
        const srv = await serve(s);
        const id = String((await srv.api('POST', '/sessions', {})).body.id);
        const sub = await subscribe(srv.url, `/ws/sessions/${id}`, { headers: srv.auth });
        s.fake.holdChats();
        await srv.api('POST', `/sessions/${id}/messages`, { content: 'a question the model never answers' });
        await eventually(() => Promise.resolve(s.chats().length > 0 ? true : undefined), 'the chat request');
        expect(await srv.api('POST', `/sessions/${id}/stop`)).toMatchObject({ status: 200, body: { stopping: true } });
        const result = await sub.waitFor(isResult, 'result');
        expect(result).toMatchObject({ status: 'interrupted', exit_code: 130 });
        const shown = await srv.api('GET', `/sessions/${id}`);
        expect((shown.body.messages as Array<Record<string, unknown>>).map((m) => [m.role, m.content])).toContainEqual(['user', 'a question the model never answers']);
        expect(await srv.api('POST', `/sessions/${id}/stop`)).toMatchObject({ status: 200, body: { stopping: false } });

        // A second turn is running (held in prefill) when the server is told to stop.
        await srv.api('POST', `/sessions/${id}/messages`, { content: 'second question, then SIGTERM' });
        await eventually(() => Promise.resolve(s.chats().length > 1 ? true : undefined), 'the second chat request');
        expect(await stopServe(srv)).toBe(130);
        const messages = await s.db.withStore((store) => store.messages.list(id));
        expect(messages.map((m) => m.content)).toContain('second question, then SIGTERM');
      },
      T,
    );
  });
});
