// A service in Node's own `http` module with its defaults: every reply is chunked (a
// `res.write` before `res.end`), connections are kept alive (5 s when idle).
//   node node_http_server.js CMD [ARG...]
// listens on a free port (printed on standard output) and relays each POST body to a
// process of its own per X-SimKit-Session header, CMD, which speaks the protocol on stdio
// (e.g. `simkit serve-reference`), answering with that process's reply line. A `restart`
// message (S10) ends the session's process and starts it again on the same data
// directory (SIMKIT_DATA_DIR, one a session), from which it comes back as it was.
const http = require('http');
const { spawn } = require('child_process');
const readline = require('readline');
const fs = require('fs');
const os = require('os');
const path = require('path');

const command = process.argv.slice(2);
const sessions = new Map();

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
      res.setHeader('Content-Type', 'application/json');
      res.write(JSON.stringify({ ok: true, re: message.seq }));
      res.end('\n');
      return;
    }
    s.waiting.push((line) => {
      res.setHeader('Content-Type', 'application/json');
      res.write(line);   // a write before the end: Node frames the body as chunks
      res.end('\n');
    });
    s.child.stdin.write(body + '\n');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/simkit`));
