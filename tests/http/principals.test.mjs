// Who is calling, on the Streamable HTTP endpoint: static tokens that name
// their principal and scopes (http.token_file lines `TOKEN PRINCIPAL
// [SCOPE ...]`), seen on the wire with raw requests.
//   - a legacy session belongs to the principal that opened it: another
//     principal's token with its id is an unknown session (404), and its
//     DELETE ends nothing
//   - a read-only token of alice's reads her sandbox, and is refused
//     start_task with 403 and a Bearer insufficient_scope challenge naming
//     taskbox:run
//   - no secret anywhere: every token, and a JWT from a real authorization
//     server with each of its parts, is looked for in the server's stderr
//     (at debug level), in /metrics, in every answer's headers and body,
//     and in a sandbox command's environment: none appears
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLIENT_INFO, MODERN_VERSION, envelope, scratchDir } from "../lib/client.mjs";
import { consent, startAuthServer, TestOAuthClient } from "../lib/oidc.mjs";
import { auth as authV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import { freePort, serveHttp } from "../lib/serve-http.mjs";

const LEGACY = "2025-11-25";
const token = () => randomBytes(24).toString("base64url");
const TOKENS = { alice: token(), bob: token(), reader: token(), operator: token() };

let server;
let as;
let dir;
let url;
let jwt; // alice's access token from the authorization server
const answers = []; // every answer's status line, headers and body, for the secret search

before(async () => {
  dir = scratchDir("taskbox-principals-");
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  as = await startAuthServer({ resource: url });
  const tokenFile = join(dir, "tokens");
  writeFileSync(
    tokenFile,
    [
      "# the team's tokens",
      `${TOKENS.alice} alice taskbox:run`,
      "",
      `${TOKENS.bob} bob taskbox:run`,
      // alice's second, read-only token: the same principal, fewer scopes
      `${TOKENS.reader} alice taskbox:read`,
    ].join("\n") + "\n",
    { mode: 0o600 },
  );
  server = await serveHttp({
    port,
    dir,
    config: {
      default: "local",
      providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } },
      http: { token_file: tokenFile, public_url: url, oauth: { issuer: as.issuer } },
    },
    // Everything the server logs is searched: the most it says.
    env: { TASKBOX_HTTP_TOKEN: TOKENS.operator, TASKBOX_LOG: "debug", PATH: `/usr/bin:/bin:${process.env.PATH || ""}` },
    echo: false,
  });
  const oauth = new TestOAuthClient();
  assert.equal(await authV1(oauth, { serverUrl: url, scope: "taskbox:run" }), "REDIRECT");
  const code = (await consent(oauth)).searchParams.get("code");
  assert.equal(await authV1(oauth, { serverUrl: url, authorizationCode: code }), "AUTHORIZED");
  jwt = oauth.tokens().access_token;
});

after(async () => {
  try {
    if (server) await server.stop();
  } finally {
    if (as) await as.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

// POSTs a JSON-RPC message; resolves { status, headers, text, last }.
async function post(body, { bearer, session, headers = {}, target = url } = {}) {
  const r = await fetch(target, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(session ? { "mcp-session-id": session, "mcp-protocol-version": LEGACY } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return answer(r);
}

async function answer(r) {
  const text = await r.text();
  answers.push(`${r.status}\n${[...r.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n\n${text}`);
  let messages = [];
  if ((r.headers.get("content-type") || "").startsWith("text/event-stream"))
    messages = text.split("\n\n").filter((f) => f.includes("data: ")).map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: ")).slice(6)));
  else if (text) messages = [JSON.parse(text)];
  return { status: r.status, headers: r.headers, text, last: messages.at(-1) };
}

// A legacy session opened with bearer: its id.
async function open(bearer) {
  const r = await post(
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: CLIENT_INFO } },
    { bearer },
  );
  assert.equal(r.status, 200, r.text);
  const session = r.headers.get("mcp-session-id");
  assert.ok(session, "initialize opens a session");
  const n = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { bearer, session });
  assert.equal(n.status, 202, n.text);
  return session;
}

let nextId = 10;
function callIn(session, bearer, name, args) {
  return post({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args } }, { bearer, session });
}

// The tool's structured result, which must not be an error.
function data(r, what) {
  assert.equal(r.status, 200, `${what}: ${r.status} ${r.text}`);
  assert.ok(r.last.result, `${what}: ${r.text}`);
  assert.equal(r.last.result.isError, false, `${what}: ${r.text}`);
  return r.last.result.structuredContent;
}

// The challenge's auth-params, as a map.
function challengeParams(header) {
  assert.match(header || "", /^Bearer\b/, `a Bearer challenge: ${header}`);
  const params = {};
  for (const m of header.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]] = m[2];
  return params;
}

describe("static tokens name their principal", () => {
  let sandbox_id;

  test("a session opened by alice is unknown to bob, and bob's DELETE of it ends nothing", async () => {
    const alice = await open(TOKENS.alice);
    sandbox_id = data(await callIn(alice, TOKENS.alice, "create_sandbox", { timeout: 600 }), "create_sandbox").sandbox_id;

    const stolen = await callIn(alice, TOKENS.bob, "list_tasks", { sandbox_id });
    assert.equal(stolen.status, 404, `bob with alice's session: ${stolen.status} ${stolen.text}`);

    const del = await fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${TOKENS.bob}`, "mcp-session-id": alice } });
    const delAnswer = await answer(del);
    assert.equal(delAnswer.status, 404, `bob's DELETE of alice's session: ${delAnswer.status} ${delAnswer.text}`);

    // Alice's session is alive, with its default sandbox (the newest one
    // it created: run_command without sandbox_id uses it).
    const out = data(await callIn(alice, TOKENS.alice, "run_command", { command: "echo still" }), "alice after bob's DELETE");
    assert.equal(out.stdout, "still\n");
    // Bob's own session works, for what is his: alice's sandbox is not
    // (tests/http/tenancy-suite.mjs has the whole of that).
    const bob = await open(TOKENS.bob);
    const hers = await callIn(bob, TOKENS.bob, "list_tasks", { sandbox_id });
    assert.equal(hers.last.result.isError, true, `bob about alice's sandbox: ${hers.text}`);
    assert.match(hers.text, /does not exist/);
    const his = data(await callIn(bob, TOKENS.bob, "create_sandbox", { timeout: 600 }), "bob in his own session").sandbox_id;
    data(await callIn(bob, TOKENS.bob, "list_tasks", { sandbox_id: his }), "bob's list_tasks of his own");
    // Alice ends her session herself.
    const end = await fetch(url, { method: "DELETE", headers: { authorization: `Bearer ${TOKENS.alice}`, "mcp-session-id": alice } });
    assert.equal((await answer(end)).status, 204);
  });

  test("alice's read-only token reads her sandbox, and start_task is refused with 403 insufficient_scope naming taskbox:run", async () => {
    const alice = await open(TOKENS.alice);
    const sb = data(await callIn(alice, TOKENS.alice, "create_sandbox", { timeout: 600 }), "create_sandbox").sandbox_id;
    const task = data(await callIn(alice, TOKENS.alice, "start_task", { sandbox_id: sb, command: "echo ro" }), "start_task");

    const reader = await open(TOKENS.reader);
    const listed = data(await callIn(reader, TOKENS.reader, "list_tasks", { sandbox_id: sb }), "list_tasks as reader");
    assert.ok(JSON.stringify(listed).includes(task.task_id), JSON.stringify(listed));
    const got = data(await callIn(reader, TOKENS.reader, "get_task", { sandbox_id: sb, task_id: task.task_id, wait: 10 }), "get_task as reader");
    assert.equal(got.task_id, task.task_id);

    const tools = await post({ jsonrpc: "2.0", id: nextId++, method: "tools/list", params: {} }, { bearer: TOKENS.reader, session: reader });
    assert.equal(tools.status, 200, tools.text);
    assert.ok(tools.last.result.tools.some((t) => t.name === "start_task"), "tools/list lists every tool whatever the scopes");

    const refused = await callIn(reader, TOKENS.reader, "start_task", { sandbox_id: sb, command: "touch /tmp/no" });
    assert.equal(refused.status, 403, `start_task as reader: ${refused.status} ${refused.text}`);
    const c = challengeParams(refused.headers.get("www-authenticate"));
    assert.equal(c.error, "insufficient_scope");
    // Every scope the call needs: taskbox:run (which includes reading),
    // perhaps with taskbox:read beside it; never admin.
    const named = c.scope.split(" ");
    assert.ok(named.includes("taskbox:run"), `the 403 names taskbox:run: ${c.scope}`);
    assert.ok(named.every((s) => s === "taskbox:run" || s === "taskbox:read"), `only what start_task needs: ${c.scope}`);
    assert.equal(c.resource_metadata, `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`);

    // The same in MCP 2026-07-28 (no session).
    const params = { name: "start_task", arguments: { sandbox_id: sb, command: "true" }, _meta: envelope() };
    const modern = await post(
      { jsonrpc: "2.0", id: nextId++, method: "tools/call", params },
      { bearer: TOKENS.reader, headers: { "mcp-protocol-version": MODERN_VERSION, "mcp-method": "tools/call", "mcp-name": "start_task" } },
    );
    assert.equal(modern.status, 403, `modern start_task as reader: ${modern.status} ${modern.text}`);
    assert.equal(challengeParams(modern.headers.get("www-authenticate")).error, "insufficient_scope");

    data(await callIn(alice, TOKENS.alice, "kill_sandbox", { sandbox_id: sb }), "kill_sandbox");
  });

  test("no token and no JWT, nor any part of one, in the log, /metrics, an answer or a sandbox's environment", async () => {
    // The JWT works, and so does every static token.
    const viaJwt = await open(jwt);
    const sb = data(await callIn(viaJwt, jwt, "create_sandbox", { timeout: 600 }), "create_sandbox with the JWT").sandbox_id;
    const env = data(await callIn(viaJwt, jwt, "run_command", { sandbox_id: sb, command: "env" }), "env").stdout;
    assert.match(env, /PATH=/, "the command's environment was read");
    for (const t of Object.values(TOKENS)) await open(t);

    // Refused and malformed attempts, whose errors must not echo them.
    const tampered = jwt.slice(0, -4) + (jwt.endsWith("AAAA") ? "BBBB" : "AAAA");
    for (const bad of [TOKENS.alice + "x", tampered, `${jwt} ${TOKENS.bob}`, jwt.split(".").slice(0, 2).join(".")])
      assert.equal((await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }, { bearer: bad })).status, 401, "a bad token is refused");
    const inQuery = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }, { target: `${url}?access_token=${TOKENS.alice}` });
    assert.ok(inQuery.status === 400 || inQuery.status === 401, `a token in the query string is refused: ${inQuery.status}`);
    await callIn(viaJwt, TOKENS.reader, "run_command", { sandbox_id: sb, command: "true" });
    await callIn(viaJwt, jwt, "run_command", { sandbox_id: sb, command: "true", bogus: TOKENS.bob });

    const metrics = await fetch(`${new URL(url).origin}/metrics`, { headers: { authorization: `Bearer ${TOKENS.operator}` } });
    assert.equal(metrics.status, 200);
    const metricsText = await metrics.text();
    data(await callIn(viaJwt, jwt, "kill_sandbox", { sandbox_id: sb }), "kill_sandbox");

    const places = { "the server's stderr": server.stderr(), "/metrics": metricsText, "the answers": answers.join("\n"), "the sandbox's environment": env };
    const secrets = { ...Object.fromEntries(Object.entries(TOKENS).map(([k, v]) => [`${k}'s token`, v])), "the JWT": jwt };
    jwt.split(".").forEach((part, i) => (secrets[`the JWT's part ${i + 1}`] = part));
    for (const [where, text] of Object.entries(places))
      for (const [what, secret] of Object.entries(secrets))
        assert.ok(!text.includes(secret), `${what} appears in ${where}`);
  });
});
