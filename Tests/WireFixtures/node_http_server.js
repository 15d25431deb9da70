// A service in Node's own `http` module with its defaults: every reply is chunked (a
// `res.write` before `res.end`), connections are kept alive (5 s when idle).
//   node node_http_server.js [--mixed] CMD [ARG...]
// listens on a free port (printed on standard output) and relays each POST body to a
// process of its own per X-SimKit-Session header, CMD, which speaks the protocol on stdio
// (e.g. `simkit serve-reference`), answering with that process's reply line. A `restart`
// message (S10) ends the session's process and starts it again on the same data
// directory (SIMKIT_DATA_DIR, one a session), from which it comes back as it was.
// --mixed: the answers take, in turn, every form Node's own API gives a reply:
//   0 chunked, kept alive (the default)
//   1 a `100 Continue` and a `102 Processing` first (res.writeContinue, res.writeProcessing), then chunked
//   2 a Content-Length (set before the body), kept alive
//   3 `Connection: close`, neither Content-Length nor Transfer-Encoding: the body ends at the close
const http = require('http');
const { spawn } = require('child_process');
const readline = require('readline');
const fs = require('fs');
const os = require('os');
const path = require('path');

let args = process.argv.slice(2);
const mixed = args[0] === '--mixed';
if (mixed) args = args.slice(1);
const command = args;
const sessions = new Map();
let answered = 0;

function start(s) {
  s.child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'],
                                                  env: { ...process.env, SIMKIT_DATA_DIR: s.dir } });
  readline.createInterface({ input: s.child.stdout }).on('line', (line) => s.waiting.shift()(line));
}

function session(id) {
  let s = sessions.get(id);
  if (!s) {
    s = { waiting: [], dir: fs.mkdtempSync(path.join(os.tmpdir(), 'simkit-fixture-node-')) };
    start(s);
    sessions.set(id, s);
  }
  return s;
}

function reply(res, line) {
  const form = mixed ? answered++ % 4 : 0;
  res.setHeader('Content-Type', 'application/json');
  if (mixed) res.setHeader('X-Form', ['chunked', 'continue', 'length', 'close'][form]);   // for the test: which form it took
  if (form === 1) {
    res.writeContinue();
    res.writeProcessing();
  }
  if (form === 2) {
    const body = line + '\n';
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
    return;
  }
  if (form === 3) {
    res.setHeader('Connection', 'close');
    res.removeHeader('Transfer-Encoding');   // Node's own way to a body framed by the close
    res.removeHeader('Content-Length');
  }
  res.write(line);   // a write before the end: Node frames the body as chunks
  res.end('\n');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const s = session(req.headers['x-simkit-session'] || '');
    const body = Buffer.concat(chunks).toString();
    const message = JSON.parse(body);
    if (message.op === 'restart') {
      s.child.kill('SIGKILL');
      s.waiting = [];
      start(s);
      reply(res, JSON.stringify({ ok: true, re: message.seq }));
      return;
    }
    s.waiting.push((line) => reply(res, line));
    s.child.stdin.write(body + '\n');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/simkit`));
