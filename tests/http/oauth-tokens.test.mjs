// The token table: OAuth access tokens (JWTs) against the real binary, from
// a test issuer whose keys this test makes and whose JWKS it serves over
// HTTP (oauth-issuer.mjs). Each refusal is checked for its status, its
// WWW-Authenticate challenge and its error_description; the JWKS fetches
// are counted.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { scratchDir, spawnListening } from "../lib/client.mjs";
import { TestIssuer, b64url } from "./oauth-issuer.mjs";

const PUBLIC_URL = "http://127.0.0.1/mcp"; // the resource: the tokens' aud
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts taskbox with oauth trusting issuer; resolves once it listens.
async function serve(issuer, oauth = {}) {
  const dir = scratchDir("taskbox-oauth-");
  const config = join(dir, "config.json");
  writeFileSync(config, JSON.stringify({
    default: "local",
    providers: { local: { plugin: "local", settings: {} } },
    http: { public_url: PUBLIC_URL, oauth: { issuer: issuer.issuer, ...oauth } },
  }));
  const env = { ...process.env, XDG_STATE_HOME: join(dir, "state") };
  delete env.TASKBOX_HTTP_TOKEN;
  const srv = await spawnListening(["serve", "--config", config, "--http", "127.0.0.1:0"], env);
  const url = srv.url;
  return {
    url,
    get log() { return srv.log(); },
    stop: srv.stop,
  };
}

const INIT = {
  jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "oauth-test", version: "1" } },
};

// An initialize with token as a bearer token (none: no header).
async function initialize(s, token, { query = "" } = {}) {
  const r = await fetch(s.url + query, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(INIT),
  });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

async function accepted(s, token) {
  const r = await initialize(s, token);
  assert.equal(r.status, 200, r.text);
  assert.equal(JSON.parse(r.text).result.serverInfo.name, "taskbox");
}

// A 401 whose challenge says invalid_token with a description matching
// why, and points at the resource metadata.
function assertRefused(r, why) {
  assert.equal(r.status, 401, r.text);
  const challenge = r.headers.get("www-authenticate");
  assert.ok(challenge, "a WWW-Authenticate header");
  assert.match(challenge, /^Bearer /);
  assert.match(challenge, /error="invalid_token"/);
  assert.match(challenge, /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource[^"]*"/);
  const m = /error_description="([^"]*)"/.exec(challenge);
  assert.ok(m, `an error_description in ${challenge}`);
  assert.match(m[1], why);
  return m[1];
}

// Nothing of the token is repeated anywhere in the answer or the log.
function assertNoLeak(s, r, token) {
  for (const part of token.split(".").filter((p) => p.length >= 8)) {
    assert.ok(!r.text.includes(part), "the body repeats part of the token");
    assert.ok(!(r.headers.get("www-authenticate") || "").includes(part), "the challenge repeats part of the token");
    assert.ok(!s.log.includes(part), "the log repeats part of the token");
  }
}

const issuer = new TestIssuer();
const kids = {};

before(async () => {
  await issuer.start();
  for (const alg of ["RS256", "PS256", "ES256", "EdDSA"]) kids[alg] = await issuer.addKey(alg);
  kids.unlisted = await issuer.addKey("ES256", { listed: false });
});
after(() => issuer.stop());

test("the token table: every algorithm, every claim rule, every forgery", async (t) => {
  issuer.jwksFetches = 0;
  const s = await serve(issuer);
  const now = Math.floor(Date.now() / 1000);
  try {
    await t.test("twenty first requests at once wait for one fetch of the keys", async () => {
      const first = await Promise.all(Array.from({ length: 20 }, () =>
        issuer.token(kids.ES256, { aud: PUBLIC_URL }).then((tok) => initialize(s, tok))));
      for (const r of first) assert.equal(r.status, 200, r.text);
      assert.equal(issuer.jwksFetches, 1);
    });
    for (const alg of ["RS256", "PS256", "ES256", "EdDSA"])
      await t.test(`valid ${alg}`, () => issuer.token(kids[alg], { aud: PUBLIC_URL }).then((tok) => accepted(s, tok)));
    await t.test("valid, aud a list naming this server", async () =>
      accepted(s, await issuer.token(kids.ES256, { aud: ["https://other.example", PUBLIC_URL] })));

    const rows = [
      ["wrong aud", kids.ES256, { aud: "https://other.example/mcp" }, /audience \(aud\) is not this server/],
      ["no aud", kids.ES256, {}, /has no audience \(aud\)/],
      ["expired", kids.ES256, { aud: PUBLIC_URL, iat: now - 7200, exp: now - 3600 }, /has expired/],
      ["nbf ahead", kids.ES256, { aud: PUBLIC_URL, nbf: now + 3600 }, /not valid yet \(nbf\)/],
      ["no exp", kids.ES256, { aud: PUBLIC_URL, exp: undefined }, /has no expiry time \(exp\)/],
      ["wrong iss", kids.ES256, { aud: PUBLIC_URL, iss: `${issuer.issuer}/other` }, /issuer \(iss\) is not/],
      ["unknown key", kids.unlisted, { aud: PUBLIC_URL }, /no key of the issuer has this kid/],
      ["an RSA token under an EC key's kid", kids.ES256, { aud: PUBLIC_URL }, /does not fit the type of the issuer's key/, kids.RS256],
    ];
    for (const [name, kid, claims, why, signer] of rows)
      await t.test(name, async () => {
        let tok = await issuer.token(signer || kid, claims);
        if (signer) { // the header names kid: re-sign with signer's key
          const k = issuer.keys.get(signer);
          tok = await new SignJWT(JSON.parse(Buffer.from(tok.split(".")[1], "base64url")))
            .setProtectedHeader({ alg: k.alg, kid }).sign(k.privateKey);
        }
        const r = await initialize(s, tok);
        assertRefused(r, why);
        assertNoLeak(s, r, tok);
      });

    await t.test("alg none", async () => {
      const claims = { iss: issuer.issuer, sub: "mallory", aud: PUBLIC_URL, exp: now + 300 };
      const tok = `${b64url({ alg: "none", kid: kids.ES256 })}.${b64url(claims)}.`;
      assertRefused(await initialize(s, tok), /not signed \(alg none is refused\)/);
    });
    await t.test("HS256 signed with the RSA key's public bytes", async () => {
      const pem = KeyObject.from(issuer.keys.get(kids.RS256).publicKey).export({ type: "spki", format: "pem" });
      const claims = { iss: issuer.issuer, sub: "mallory", aud: PUBLIC_URL, exp: now + 300 };
      const tok = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: kids.RS256 })
        .sign(new Uint8Array(Buffer.from(pem)));
      const r = await initialize(s, tok);
      assertRefused(r, /HMAC/);
      assertNoLeak(s, r, tok);
    });
    await t.test("not a JWT", async () =>
      assertRefused(await initialize(s, "not-a-jwt-at-all"), /not a signed JWT/));
    await t.test("a token in the query string", async () => {
      const tok = await issuer.token(kids.ES256, { aud: PUBLIC_URL });
      const r = await initialize(s, null, { query: `?access_token=${tok}` });
      assert.ok(r.status === 400 || r.status === 401, `${r.status} ${r.text}`);
      assert.match(r.text, /query/i);
      assertNoLeak(s, r, tok);
    });
    // One fetch at the first token, one more for the unknown kid.
    assert.equal(issuer.jwksFetches, 2);

    await t.test("a thousand made-up kids: one refetch per 30 s at most", async () => {
      const k = issuer.keys.get(kids.ES256);
      const claims = { iss: issuer.issuer, sub: "mallory", aud: PUBLIC_URL, exp: now + 300 };
      const forged = await Promise.all(Array.from({ length: 1000 }, (_, i) =>
        new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: `made-up-${i}` }).sign(k.privateKey)));
      const before = issuer.jwksFetches, start = Date.now();
      for (let i = 0; i < forged.length; i += 50) {
        const answers = await Promise.all(forged.slice(i, i + 50).map((tok) => initialize(s, tok)));
        for (const r of answers) assertRefused(r, /no key of the issuer has this kid/);
      }
      // The unknown key's refetch above opened a 30 s window; each
      // window allows one more (under valgrind this takes a while).
      const allowed = Math.floor((Date.now() - start) / 30000) + 1;
      assert.ok(issuer.jwksFetches - before <= allowed,
        `${issuer.jwksFetches - before} JWKS fetches for 1000 made-up kids in ${Date.now() - start} ms`);
    });
  } finally {
    await s.stop();
  }
});

test("keys rotate: a new key is taken after one refetch, a removed one is refused once the cache is stale, a JWKS down is 503", async () => {
  issuer.jwksFetches = 0;
  issuer.maxAge = 60; // a slow run must not see the first set go stale
  const s = await serve(issuer);
  try {
    const old = await issuer.addKey("ES256");
    // The first token comes on a GET: its connection waits, suspended,
    // for the keys (no body to read meanwhile).
    const metrics = await fetch(s.url.replace(/\/mcp$/, "/metrics"),
      { headers: { authorization: `Bearer ${await issuer.token(old, { aud: PUBLIC_URL })}` } });
    assert.equal(metrics.status, 200, await metrics.text());
    await accepted(s, await issuer.token(old, { aud: PUBLIC_URL }));
    assert.equal(issuer.jwksFetches, 1);
    const rotated = await issuer.addKey("EdDSA");
    issuer.maxAge = 1; // the next set: kept 5 s, taskbox's least
    await accepted(s, await issuer.token(rotated, { aud: PUBLIC_URL }));
    assert.equal(issuer.jwksFetches, 2, "one refetch for the new kid");
    issuer.list(old, false);
    await sleep(5500);
    const tok = await issuer.token(old, { aud: PUBLIC_URL });
    assertRefused(await initialize(s, tok), /no key of the issuer has this kid/);
    await accepted(s, await issuer.token(rotated, { aud: PUBLIC_URL }));

    // The issuer goes down: once the set is stale, 503 with Retry-After,
    // not 401, and no fetch per request.
    issuer.down = true;
    await sleep(5500);
    const valid = await issuer.token(rotated, { aud: PUBLIC_URL });
    const requestsBefore = issuer.requests;
    for (let i = 0; i < 3; i++) {
      const r = await initialize(s, valid);
      assert.equal(r.status, 503, r.text);
      assert.match(r.headers.get("retry-after") || "", /^[1-9][0-9]*$/);
      assert.match(r.text, /keys cannot be fetched now/);
      assertNoLeak(s, r, valid);
    }
    // One attempt: the JWKS, then (its URL forgotten) at most the two
    // metadata documents; none for the later requests.
    assert.ok(issuer.requests - requestsBefore <= 3, `${issuer.requests - requestsBefore} requests to a JWKS that is down`);
  } finally {
    issuer.maxAge = null;
    issuer.down = false;
    await s.stop();
  }
});
