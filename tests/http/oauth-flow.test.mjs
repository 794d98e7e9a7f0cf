// The MCP authorization flow end to end: `taskbox serve --http` as an OAuth
// 2.1 resource server (http.public_url, http.oauth.issuer) beside a real
// authorization server (oidc-provider, tests/lib/oidc.mjs), and the official
// SDK clients' own OAuth support walking the whole flow from the first 401:
// protected resource metadata (RFC 9728), authorization server metadata
// (RFC 8414), dynamic client registration (RFC 7591), authorization code
// with PKCE and a resource indicator (RFC 8707), the token, then tool calls.
//   - the SDK v1 client in the legacy era (initialize, a session)
//   - the SDK v2 client pinned to MCP 2026-07-28 (no session)
//   - step-up: a client holding a read-only token is refused start_task
//     with 403 insufficient_scope naming taskbox:run, authorizes again for
//     what the challenge names (v1 asks for exactly that) and succeeds
// One taskbox process and one authorization server serve all three.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { rmSync, writeFileSync } from "node:fs";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth as authV1, UnauthorizedError as UnauthorizedV1 } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
  UnauthorizedError as UnauthorizedV2,
} from "@modelcontextprotocol/client";
import { randomBytes } from "node:crypto";
import { CLIENT_INFO, MODERN_VERSION, envelope, scratchDir } from "../lib/client.mjs";
import { consent, formatLog, jwtParts, loggingFetch, startAuthServer, TestOAuthClient } from "../lib/oidc.mjs";
import { freePort, serveHttp } from "../lib/serve-http.mjs";

let as;
let server;
let dir;
let publicUrl;
let prmUrl;
// Static tokens beside OAuth: the principal operator (an admin), and one
// of alice's with taskbox:run, for what her read-only OAuth client must
// find made already in a sandbox of hers (the authorization server's
// alice is the same principal: the token's sub).
const OPERATOR = randomBytes(24).toString("hex");
const ALICE_RUN = randomBytes(24).toString("hex");

before(async () => {
  dir = scratchDir("taskbox-oauth-flow-");
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}/mcp`;
  prmUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  as = await startAuthServer({ resource: publicUrl });
  const tokenFile = join(dir, "tokens");
  writeFileSync(tokenFile, `${ALICE_RUN} alice taskbox:run\n`, { mode: 0o600 });
  server = await serveHttp({
    port,
    dir,
    config: {
      default: "local",
      providers: { local: { plugin: "local", settings: { root: join(dir, "state") } } },
      http: { public_url: publicUrl, oauth: { issuer: as.issuer }, token_file: tokenFile },
    },
    env: { TASKBOX_HTTP_TOKEN: OPERATOR, PATH: `/usr/bin:/bin:${process.env.PATH || ""}` },
  });
  assert.equal(server.url, publicUrl, "taskbox listens where its public_url says");
});

after(async () => {
  try {
    if (server) await server.stop();
  } finally {
    if (as) await as.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

function data(r, what) {
  assert.ok(!r.isError, `${what}: unexpected tool error: ${r.content?.[0]?.text}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}

// A tool call as the operator, in MCP 2026-07-28 (one POST, no session).
function asOperator(name, args) {
  return asToken(OPERATOR, name, args);
}

// The same with another static token.
async function asToken(token, name, args) {
  const r = await fetch(publicUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": MODERN_VERSION,
      "mcp-method": "tools/call",
      "mcp-name": name,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args, _meta: envelope() } }),
  });
  assert.equal(r.status, 200, `${name} with a static token`);
  assert.match(r.headers.get("content-type") || "", /^application\/json/);
  const { result } = await r.json();
  return data(result, `${name} with a static token`);
}

// create_sandbox, start_task, get_task (waiting for the end), kill_sandbox
// through call(name, args).
async function roundTrip(call, word) {
  const { sandbox_id } = data(await call("create_sandbox", { timeout: 600 }), "create_sandbox");
  try {
    const t = data(await call("start_task", { sandbox_id, command: `echo ${word}` }), "start_task");
    let r;
    for (let i = 0; i < 60; i++) {
      r = data(await call("get_task", { sandbox_id, task_id: t.task_id, wait: 5 }), "get_task");
      if (r.state !== "running" && r.state !== "unknown") break;
    }
    assert.equal(r.state, "succeeded", JSON.stringify(r));
    assert.equal(r.stdout, `${word}\n`);
  } finally {
    data(await call("kill_sandbox", { sandbox_id }), "kill_sandbox");
  }
}

// The challenge's auth-params, as a map (quoted values unquoted).
function challengeParams(header) {
  assert.match(header || "", /^Bearer\b/, `a Bearer challenge: ${header}`);
  const params = {};
  for (const m of header.matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) params[m[1]] = m[2];
  return params;
}

// Asserts the flow's steps appear in the log in order, each once at least:
// the 401, the PRM, the AS metadata, registration, the browser at /auth,
// the token request, then an authorized call to the MCP endpoint.
function assertFlow(log, firstScope) {
  const steps = [
    ["the first call, refused", (e) => e.url === publicUrl && e.status === 401 && e.authorization === "none"],
    ["the protected resource metadata", (e) => e.method === "GET" && e.url.startsWith(`${new URL(publicUrl).origin}/.well-known/oauth-protected-resource`) && e.status === 200],
    ["the authorization server metadata", (e) => e.method === "GET" && e.url.startsWith(`${as.issuer}/.well-known/`) && e.status === 200],
    ["registration", (e) => e.method === "POST" && e.url === `${as.issuer}/reg` && e.status === 201],
    ["the authorization request", (e) => e.who === "browser" && e.url.startsWith(`${as.issuer}/auth?`)],
    ["the token request", (e) => e.method === "POST" && e.url === `${as.issuer}/token` && e.status === 200],
    ["an authorized call", (e) => e.url === publicUrl && e.authorization === "Bearer" && e.status === 200],
  ];
  let i = 0;
  for (const [what, match] of steps) {
    while (i < log.length && !match(log[i])) i++;
    assert.ok(i < log.length, `${what}: not seen in order in:\n${formatLog(log)}`);
  }
  const refused = log.find((e) => e.status === 401);
  const c = challengeParams(refused.wwwAuthenticate);
  assert.equal(c.resource_metadata, prmUrl, "the 401 names the metadata URL");
  assert.equal(c.scope, firstScope, "the 401 names the scope to ask for first");
  assert.equal(c.error, undefined, "no error when no token was given");
  const authorize = new URL(log.find((e) => e.who === "browser" && e.url.startsWith(`${as.issuer}/auth?`)).url);
  assert.equal(authorize.searchParams.get("resource"), publicUrl, "the resource indicator is the public URL");
  assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
}

// Asserts a token is a JWT the authorization server made for taskbox.
function assertToken(accessToken, scope) {
  const { header, claims } = jwtParts(accessToken);
  assert.equal(header.alg, as.alg);
  assert.equal(claims.iss, as.issuer);
  assert.equal(claims.aud, publicUrl);
  assert.equal(claims.sub, "alice");
  assert.deepEqual(claims.scope.split(" ").filter((s) => s.startsWith("taskbox:")).sort(), scope);
  return { header, claims };
}

test("the protected resource metadata, at the root and under the endpoint's path, without a token", async () => {
  for (const url of [prmUrl, `${new URL(publicUrl).origin}/.well-known/oauth-protected-resource`]) {
    const r = await fetch(url);
    assert.equal(r.status, 200, url);
    assert.match(r.headers.get("content-type") || "", /^application\/json/);
    const prm = await r.json();
    assert.equal(prm.resource, publicUrl);
    assert.deepEqual(prm.authorization_servers, [as.issuer]);
    assert.deepEqual([...prm.scopes_supported].sort(), ["taskbox:admin", "taskbox:read", "taskbox:run"]);
    assert.deepEqual(prm.bearer_methods_supported, ["header"]);
    assert.equal(typeof prm.resource_name, "string");
  }
});

test("SDK v1, legacy era: from the first 401 to tool calls", { timeout: 120000 }, async (t) => {
  const log = [];
  const oauth = new TestOAuthClient({ name: "taskbox-tests-v1" });
  const clientFetch = loggingFetch(log, "client");
  const first = new TransportV1(new URL(publicUrl), { authProvider: oauth, fetch: clientFetch });
  await assert.rejects(new ClientV1(CLIENT_INFO).connect(first), UnauthorizedV1);
  const callback = await consent(oauth, loggingFetch(log, "browser"));
  await first.finishAuth(callback.searchParams.get("code"));

  const transport = new TransportV1(new URL(publicUrl), { authProvider: oauth, fetch: clientFetch });
  const client = new ClientV1(CLIENT_INFO);
  await client.connect(transport);
  try {
    assert.ok(transport.sessionId, "a legacy session");
    const tools = await client.listTools();
    assert.ok(tools.tools.some((x) => x.name === "start_task"));
    await roundTrip((name, args) => client.callTool({ name, arguments: args }), "v1");
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
  assertFlow(log, "taskbox:run");
  const { header, claims } = assertToken(oauth.tokens().access_token, ["taskbox:run"]);
  t.diagnostic(`HTTP requests of the flow:\n${formatLog(log)}`);
  t.diagnostic(`access token header ${JSON.stringify(header)} claims ${JSON.stringify(claims)}`);
});

test("SDK v2, MCP 2026-07-28: from the first 401 to tool calls", { timeout: 120000 }, async () => {
  const log = [];
  const oauth = new TestOAuthClient({ name: "taskbox-tests-v2" });
  const clientFetch = loggingFetch(log, "client");
  const modern = () => new ClientV2(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN_VERSION } } });
  const first = new TransportV2(new URL(publicUrl), { authProvider: oauth, fetch: clientFetch });
  await assert.rejects(modern().connect(first), UnauthorizedV2);
  const callback = await consent(oauth, loggingFetch(log, "browser"));
  await first.finishAuth(callback.searchParams);

  const transport = new TransportV2(new URL(publicUrl), { authProvider: oauth, fetch: clientFetch });
  const client = modern();
  await client.connect(transport);
  try {
    assert.equal(client.getProtocolEra(), "modern");
    assert.equal(transport.sessionId, undefined, "no session in 2026-07-28");
    await roundTrip((name, args) => client.callTool({ name, arguments: args }), "v2");
  } finally {
    await client.close();
  }
  assertFlow(log, "taskbox:run");
  assertToken(oauth.tokens().access_token, ["taskbox:run"]);
});

test("step-up: a read-only token reads, is refused start_task with 403 insufficient_scope, and the SDK v1 client authorizes again for taskbox:run", { timeout: 120000 }, async () => {
  const log = [];
  const oauth = new TestOAuthClient({ name: "taskbox-tests-step-up" });
  const clientFetch = loggingFetch(log, "client");
  const browser = loggingFetch(log, "browser");
  // An application that asked for reading only: its token has taskbox:read.
  assert.equal(await authV1(oauth, { serverUrl: publicUrl, scope: "taskbox:read", fetchFn: clientFetch }), "REDIRECT");
  const code = (await consent(oauth, browser)).searchParams.get("code");
  assert.equal(await authV1(oauth, { serverUrl: publicUrl, authorizationCode: code, fetchFn: clientFetch }), "AUTHORIZED");
  assertToken(oauth.tokens().access_token, ["taskbox:read"]);

  const transport = new TransportV1(new URL(publicUrl), { authProvider: oauth, fetch: clientFetch });
  const client = new ClientV1(CLIENT_INFO);
  await client.connect(transport);
  const call = (name, args) => client.callTool({ name, arguments: args });
  // Alice's own sandbox and task, made with her run token: her read-only
  // token reaches them (another principal's would answer as missing).
  const { sandbox_id } = await asToken(ALICE_RUN, "create_sandbox", { timeout: 600 });
  try {
    const { task_id } = await asToken(ALICE_RUN, "start_task", { sandbox_id, command: "echo made" });
    const listed = data(await call("list_tasks", { sandbox_id }), "list_tasks with taskbox:read");
    assert.ok(JSON.stringify(listed).includes(task_id), JSON.stringify(listed));
    data(await call("get_task", { sandbox_id, task_id }), "get_task with taskbox:read");
    const before = log.length;
    await assert.rejects(call("start_task", { sandbox_id, command: "true" }), UnauthorizedV1);
    const refused = log.slice(before).find((e) => e.status === 403);
    assert.ok(refused, `a 403 among:\n${formatLog(log.slice(before))}`);
    const c = challengeParams(refused.wwwAuthenticate);
    assert.equal(c.error, "insufficient_scope");
    assert.ok(c.scope.split(" ").includes("taskbox:run"), `the 403 names taskbox:run: ${refused.wwwAuthenticate}`);
    assert.equal(c.resource_metadata, prmUrl);
    // v1 asks for exactly what the challenge names.
    assert.equal(oauth.authorizationUrl.searchParams.get("scope"), c.scope);

    const again = await consent(oauth, browser);
    await transport.finishAuth(again.searchParams.get("code"));
    assertToken(oauth.tokens().access_token, c.scope.split(" ").sort());
    await roundTrip(call, "stepped-up");
  } finally {
    await asOperator("kill_sandbox", { sandbox_id });
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
});
