// A test authorization server's key side, real over HTTP on 127.0.0.1: its
// RFC 8414 metadata and its JWKS, from keys made here, with npm jose
// signing tokens for them. It counts the JWKS fetches, can serve a chosen
// Cache-Control, add and remove keys, and go down (every answer 503).
import http from "node:http";
import { randomBytes } from "node:crypto";
import { SignJWT, exportJWK, generateKeyPair } from "jose";

export class TestIssuer {
  constructor() {
    this.keys = new Map(); // kid -> { alg, privateKey, publicJwk, listed }
    this.jwksFetches = 0;
    this.requests = 0; // every request, answered or not
    this.metadataFetches = 0;
    this.maxAge = null; // seconds in Cache-Control, or none
    this.down = false;
  }

  async start() {
    this.server = http.createServer((req, res) => this.answer(req, res));
    await new Promise((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    this.issuer = this.url;
    return this;
  }

  answer(req, res) {
    const json = (status, body, headers = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(body));
    };
    this.requests++;
    if (this.down) return json(503, { error: "down" });
    if (req.url === "/.well-known/oauth-authorization-server") {
      this.metadataFetches++;
      return json(200, { issuer: this.issuer, jwks_uri: `${this.url}/jwks` });
    }
    if (req.url === "/jwks") {
      this.jwksFetches++;
      const keys = [...this.keys.values()].filter((k) => k.listed).map((k) => k.publicJwk);
      return json(200, { keys }, this.maxAge === null ? {} : { "cache-control": `max-age=${this.maxAge}` });
    }
    json(404, { error: "not found" });
  }

  // A new key pair for alg (listed in the JWKS unless told otherwise).
  async addKey(alg, { listed = true, kid = `${alg}-${randomBytes(4).toString("hex")}` } = {}) {
    const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
    const publicJwk = { ...(await exportJWK(publicKey)), kid, use: "sig" };
    this.keys.set(kid, { alg, privateKey, publicKey, publicJwk, listed });
    return kid;
  }

  list(kid, listed) {
    this.keys.get(kid).listed = listed;
  }

  // A signed access token with claims over the defaults; a claim set to
  // undefined is left out.
  async token(kid, claims = {}, header = {}) {
    const k = this.keys.get(kid);
    const now = Math.floor(Date.now() / 1000);
    const all = { iss: this.issuer, sub: "alice", iat: now, exp: now + 300, jti: randomBytes(8).toString("hex"), ...claims };
    for (const name of Object.keys(all)) if (all[name] === undefined) delete all[name];
    return new SignJWT(all).setProtectedHeader({ alg: k.alg, kid, typ: "at+jwt", ...header }).sign(k.privateKey);
  }

  async stop() {
    this.server.closeAllConnections?.();
    await new Promise((r) => this.server.close(r));
  }
}

export const b64url = (v) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
