// haproxy in front of taskbox replicas, as the README recommends: the
// configuration the replica tests and the bench both run. No dependencies,
// so bench/ imports it too.
import { existsSync } from "node:fs";
import net from "node:net";

// Debian puts it in /usr/sbin, which a user's PATH may lack.
export const HAPROXY = existsSync("/usr/sbin/haproxy") ? "/usr/sbin/haproxy" : "haproxy";

// The configuration text: a frontend on 127.0.0.1:port, round robin over
// replicas ([{ name, port }]); a replica that does not answer /healthz is
// out within a second; only a request that never reached a replica is sent
// again (a start_task whose replica died before answering must not run
// twice); legacy sessions stick to the replica that made them (learnt from
// the Mcp-Session-Id of the answer to initialize).
export function haproxyConfig(port, replicas) {
  return [
    "global",
    "  log stderr format raw local0 warning",
    "defaults",
    "  mode http",
    "  log global",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    "  retries 3",
    "  option redispatch",
    "  retry-on conn-failure",
    "frontend mcp",
    `  bind 127.0.0.1:${port}`,
    "  default_backend taskbox",
    "backend taskbox",
    "  balance roundrobin",
    "  option httpchk GET /healthz",
    "  stick-table type string len 64 size 100k expire 30m",
    "  stick match req.hdr(mcp-session-id)",
    "  stick store-response res.hdr(mcp-session-id)",
    ...replicas.map((r) => `  server ${r.name} 127.0.0.1:${r.port} check inter 300ms fall 1 rise 2`),
    "",
  ].join("\n");
}

// A free loopback port (the balancer must be told one).
export async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}
