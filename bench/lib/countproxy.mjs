// A counting proxy for a Docker engine's unix socket (bench/waits.mjs): it
// listens on a socket of its own, opens a connection to the engine's for
// each one it accepts and relays bytes both ways unchanged, counting the
// connections (open now, opened in all) and the HTTP requests the client
// sends (request lines seen at the start of a chunk or after a CRLF; a
// hijacked exec stream's raw bytes after its upgrade are not parsed as
// requests unless they look like one). It runs in the bench's own process.
import { createConnection, createServer } from "node:net";
import { unlinkSync } from "node:fs";

const REQUEST_LINE = /(?:^|\r\n)(?:GET|POST|PUT|DELETE|HEAD|PATCH) \/\S* HTTP\/1\.[01]\r\n/g;

// Starts the proxy on listenPath in front of enginePath. Resolves with
// { host (a DOCKER_HOST value), counts() -> { open, connections, requests,
// byPath }, close() }.
export function startCountProxy(listenPath, enginePath) {
  const c = { open: 0, connections: 0, requests: 0, byPath: {} };
  const sockets = new Set();
  const server = createServer((client) => {
    const engine = createConnection(enginePath);
    c.open++;
    c.connections++;
    sockets.add(client);
    sockets.add(engine);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      c.open--;
      sockets.delete(client);
      sockets.delete(engine);
      client.destroy();
      engine.destroy();
    };
    client.on("data", (chunk) => {
      const text = chunk.toString("latin1", 0, Math.min(chunk.length, 4096));
      for (const m of text.matchAll(REQUEST_LINE)) {
        c.requests++;
        // The path's shape: ids and query left out.
        const shape = m[0]
          .trim()
          .replace(/ HTTP\/1\.[01]$/, "")
          .replace(/\?.*$/, "")
          .replace(/\/[0-9a-f]{12,}/g, "/ID");
        c.byPath[shape] = (c.byPath[shape] || 0) + 1;
      }
      if (!engine.write(chunk)) client.pause();
    });
    engine.on("drain", () => client.resume());
    engine.on("data", (chunk) => {
      if (!client.write(chunk)) engine.pause();
    });
    client.on("drain", () => engine.resume());
    client.on("end", () => engine.end());
    engine.on("end", () => client.end());
    client.on("close", close);
    engine.on("close", close);
    client.on("error", close);
    engine.on("error", close);
  });
  try {
    unlinkSync(listenPath);
  } catch {
    // not there
  }
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(listenPath, () =>
      resolve({
        host: `unix://${listenPath}`,
        counts: () => ({ ...c, byPath: { ...c.byPath } }),
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    );
  });
}
