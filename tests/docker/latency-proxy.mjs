// A latency proxy for a Docker engine's unix socket: it listens on a unix
// socket of its own, opens a fresh connection to the engine's socket for
// each connection it accepts, and forwards bytes both ways, holding every
// chunk the client sends for a fixed delay before passing it on. Each
// request therefore reaches the engine that much later, whatever its
// framing (HTTP/1.1, kept-alive connections, the raw streams of a hijacked
// exec or attach); what the engine sends back is passed on at once.
//
// Usage: node latency-proxy.mjs LISTEN_SOCKET ENGINE_SOCKET DELAY_MS
// Prints "ready" on stdout once it listens; runs until SIGTERM or SIGINT.
import { createConnection, createServer } from "node:net";
import { unlinkSync } from "node:fs";
import { performance } from "node:perf_hooks";

// Bytes held for the delay beyond which the client is paused until the
// engine has taken them (a bound on the proxy's memory, not a limit on
// what passes).
const HIGH_WATER = 4 << 20;

function usage(msg) {
  process.stderr.write(`latency-proxy: ${msg}\nusage: node latency-proxy.mjs LISTEN_SOCKET ENGINE_SOCKET DELAY_MS\n`);
  process.exit(2);
}

const [listenPath, enginePath, delayArg] = process.argv.slice(2);
if (!listenPath || !enginePath || delayArg === undefined) usage("three arguments are required");
const delayMs = Number(delayArg);
if (!Number.isFinite(delayMs) || delayMs < 0) usage(`DELAY_MS must be a number >= 0, not ${delayArg}`);

// One client connection and its engine connection.
function relay(client) {
  const engine = createConnection(enginePath);
  // What the client sent, in order, each piece with the time it may go on
  // (performance.now(), ms); a null chunk is the client's end of stream.
  const queue = [];
  let held = 0; // bytes in the queue or in the engine socket's buffer
  let timer = null;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (timer) clearTimeout(timer);
    client.destroy();
    engine.destroy();
  };
  // Passes on every piece whose time has come, then sleeps until the next
  // one's. The time is checked against the clock, not left to the timer
  // alone (a timer may fire up to a millisecond early).
  const pump = () => {
    timer = null;
    if (closed) return;
    const now = performance.now();
    while (queue.length && queue[0].due <= now) {
      const { chunk } = queue.shift();
      if (chunk === null) {
        engine.end();
        continue;
      }
      engine.write(chunk, () => {
        held -= chunk.length;
        if (held <= HIGH_WATER && client.isPaused()) client.resume();
      });
    }
    if (queue.length) timer = setTimeout(pump, Math.max(1, Math.ceil(queue[0].due - now)));
  };
  const hold = (chunk) => {
    queue.push({ chunk, due: performance.now() + delayMs });
    if (!timer) timer = setTimeout(pump, Math.max(1, Math.ceil(delayMs)));
  };
  client.on("error", close);
  engine.on("error", close);
  client.on("data", (chunk) => {
    held += chunk.length;
    if (held > HIGH_WATER) client.pause();
    hold(chunk);
  });
  // The client's end of stream reaches the engine after the delay too, so
  // a request followed by a half-close is still a whole request.
  let ended = false;
  const endLater = () => {
    if (ended) return;
    ended = true;
    hold(null);
  };
  client.on("end", endLater);
  client.on("close", endLater);
  // Engine to client, at once (a plain pipe keeps the back-pressure, and
  // ends the client's side once the engine's answer is all written).
  engine.pipe(client);
  engine.on("close", (hadError) => {
    if (hadError) client.destroy();
  });
}

try {
  unlinkSync(listenPath);
} catch {
  // not there: fine
}
const server = createServer({ allowHalfOpen: true, pauseOnConnect: false }, relay);
server.on("error", (e) => {
  process.stderr.write(`latency-proxy: ${e.message}\n`);
  process.exit(1);
});
server.listen(listenPath, () => process.stdout.write("ready\n"));

const stop = () => {
  server.close();
  try {
    unlinkSync(listenPath);
  } catch {
    // gone already
  }
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
