// A service in Node's own `http` module with its defaults: every reply is chunked (a
// `res.write` before `res.end`), connections are kept alive (5 s when idle).
//   node node_http_server.js CMD [ARG...]
// listens on a free port (printed on standard output) and relays each POST body to a
// process of its own per X-SimKit-Session header, CMD, which speaks the protocol on stdio
// (e.g. `simkit serve-reference`), answering with that process's reply line.
const http = require('http');
const { spawn } = require('child_process');
const readline = require('readline');

const command = process.argv.slice(2);
const sessions = new Map();

function session(id) {
  let s = sessions.get(id);
  if (!s) {
    const child = spawn(command[0], command.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    s = { child, waiting: [] };
    readline.createInterface({ input: child.stdout }).on('line', (line) => s.waiting.shift()(line));
    sessions.set(id, s);
  }
  return s;
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const s = session(req.headers['x-simkit-session'] || '');
    s.waiting.push((line) => {
      res.setHeader('Content-Type', 'application/json');
      res.write(line);   // a write before the end: Node frames the body as chunks
      res.end('\n');
    });
    s.child.stdin.write(Buffer.concat(chunks).toString() + '\n');
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}/simkit`));
