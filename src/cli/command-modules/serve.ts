/** `navi serve`: the REST + WebSocket API and the live page (src/serve/, loaded when it runs). */
import { commandFlags } from '../flags.js';
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const serveModule: NaviCommand = {
  command: 'serve',
  describe: 'Serve the REST + WebSocket API and the live page (sessions, loop runs, approvals)',
  builder: (y) =>
    commandHelp(commandFlags(y, 'serve'), {
      path: 'serve',
      uses: ['db', 'ollama', 'profile'],
      examples: [
        ['navi serve', 'http://127.0.0.1:7777 (this machine only); prints the address that signs the page in'],
        ['navi serve --port 0 -o json', 'any free port; one JSON line says which, and the token file'],
        ['NAVI_SERVE_TOKEN=$(openssl rand -hex 16) navi serve --host 0.0.0.0 --allowed-host box.lan', 'reachable from other machines (plain HTTP) as box.lan'],
      ],
      epilog:
        "Always a token: --token/NAVI_SERVE_TOKEN, else one kept in navi-serve-token in the data directory. Host must be loopback, the address listened on or an --allowed-host, Origin the page's own (403); bodies JSON (415), 1 MB at most (413). " +
        'API: README "Server" and GET /openapi.json. Exit codes: 2 invalid input (also: a bad token or --allowed-host, the port in use); 130 stopped by SIGINT/SIGTERM (running turns and loops saved).',
    }),
  handler: handledBy('serve'),
};
