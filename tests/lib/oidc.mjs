// A real OAuth 2.1 authorization server for the integration tests, and the
// client side of its flow as an MCP client application would run it:
//   startAuthServer  oidc-provider (an OpenID Certified authorization
//                    server) on 127.0.0.1, issuing JWT access tokens for one
//                    resource (RFC 8707 resource indicators), with open
//                    dynamic client registration (RFC 7591), PKCE, and a
//                    consent that approves at once (no login form)
//   TestOAuthClient  an OAuthClientProvider that both SDK clients take
//                    (the v1 `authProvider` and the v2 one): it keeps what
//                    the SDK hands it in memory and remembers the
//                    authorization URL the SDK wants a browser sent to
//   consent          the browser: follows that URL with fetch and a cookie
//                    jar up to the redirect_uri, and returns the code
//   loggingFetch     a fetch that records every request the client makes
//                    (method, URL, status, WWW-Authenticate), for the
//                    transcript and for asserting the order of the flow
import http from "node:http";
import Provider, { errors } from "oidc-provider";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import { randomBytes } from "node:crypto";

// The scopes taskbox knows, as its protected resource metadata lists them.
export const SCOPES = ["taskbox:read", "taskbox:run", "taskbox:admin"];

// Starts the authorization server. opts:
//   resource  the resource indicator it issues tokens for: taskbox's
//             public_url, compared as a string (required)
//   alg       the signing algorithm of its one key: "ES256" (default),
//             "RS256", "PS256" or "EdDSA"
//   scopes    the scopes it grants for that resource (default: SCOPES)
//   ttl       access token lifetime in seconds (default 300)
//   account   the end user every authorization is made for (default alice)
//   grant     (requested scopes, round) -> the scopes the user approves
//             (default: all requested); round counts authorizations from 1
// Resolves { issuer, url, jwksUri, metadataUrl, resource, rounds, close() }.
export async function startAuthServer(opts = {}) {
  const resource = opts.resource;
  if (!resource) throw new Error("startAuthServer: opts.resource is required");
  const alg = opts.alg || "ES256";
  const scopes = opts.scopes || SCOPES;
  const account = opts.account || "alice";
  const grantPolicy = opts.grant || ((requested) => requested);

  // Listen first, so the issuer names the port the system chose.
  const server = http.createServer();
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${server.address().port}`;

  const { privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === "EdDSA" ? { crv: "Ed25519" } : {}) });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomBytes(8).toString("hex"), alg, use: "sig" };

  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    // One key: id tokens (which these tests never ask for) must use its
    // algorithm too, or every registration fails.
    clientDefaults: {
      grant_types: ["authorization_code"],
      id_token_signed_response_alg: alg,
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
    enabledJWA: { idTokenSigningAlgValues: [alg], requestObjectSigningAlgValues: [alg] },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    pkce: { required: () => true },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => oneOf ?? resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget();
          return {
            scope: scopes.join(" "),
            audience: resource,
            accessTokenFormat: "jwt",
            accessTokenTTL: opts.ttl || 300,
            jwt: { sign: { alg } },
          };
        },
      },
    },
  });

  // Both SDK clients send `scope` in their registration request, which
  // oidc-provider checks against the OpenID scopes it knows. RFC 7591 lets a
  // server drop it; the scopes a client gets are decided at consent.
  provider.use(async (ctx, next) => {
    if (ctx.method === "POST" && ctx.path === "/reg") {
      const chunks = [];
      for await (const c of ctx.req) chunks.push(c);
      const metadata = JSON.parse(Buffer.concat(chunks).toString() || "{}");
      delete metadata.scope;
      ctx.req.body = metadata;
    }
    return next();
  });

  // The consent: the user (account) approves what grantPolicy says, at once.
  const rounds = [];
  provider.use(async (ctx, next) => {
    if (ctx.method !== "GET" || !/^\/interaction\/[^/]+$/.test(ctx.path)) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { params, prompt } = details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: account, clientId: params.client_id });
    const requested = String(params.scope || "").split(" ").filter(Boolean);
    const approved = grantPolicy(requested, rounds.length + 1);
    rounds.push({ requested, approved, resource: params.resource });
    const oidc = approved.filter((s) => !scopes.includes(s));
    if (oidc.length) grant.addOIDCScope(oidc.join(" "));
    const forResource = approved.filter((s) => scopes.includes(s));
    if (forResource.length) grant.addResourceScope(params.resource || resource, forResource.join(" "));
    const result = { login: { accountId: account }, consent: { grantId: await grant.save() } };
    if (prompt.name === "consent") delete result.login;
    const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    ctx.status = 303;
    ctx.redirect(to);
  });

  server.on("request", provider.callback());
  const metadataUrl = `${issuer}/.well-known/oauth-authorization-server`;
  return {
    issuer,
    url: issuer,
    jwksUri: `${issuer}/jwks`,
    metadataUrl,
    resource,
    alg,
    rounds,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// A fetch that records each request in log: { t (ms since the first),
// who, method, url, status, wwwAuthenticate, authorization ("Bearer" or
// "none": never the token) }. who names the party (e.g. "client", "browser").
export function loggingFetch(log, who = "client", inner = fetch) {
  return async (input, init = {}) => {
    const req = new Request(input, init);
    const t0 = (log.start ??= Date.now());
    const entry = {
      t: Date.now() - t0,
      who,
      method: req.method,
      url: req.url,
      authorization: req.headers.get("authorization") ? req.headers.get("authorization").split(" ")[0] : "none",
    };
    log.push(entry);
    const res = await inner(input, init);
    entry.status = res.status;
    const challenge = res.headers.get("www-authenticate");
    if (challenge) entry.wwwAuthenticate = challenge;
    return res;
  };
}

// The log as lines, for a failure message or the transcript.
export function formatLog(log) {
  return log
    .map((e) => {
      const u = new URL(e.url);
      const path = u.pathname + (u.search.length > 90 ? u.search.slice(0, 90) + "…" : u.search);
      const auth = e.authorization !== "none" ? ` (${e.authorization})` : "";
      const challenge = e.wwwAuthenticate ? `\n      WWW-Authenticate: ${e.wwwAuthenticate}` : "";
      return `${String(e.t).padStart(5)} ms  ${e.who.padEnd(7)} ${e.method} ${u.host}${path}${auth} -> ${e.status}${challenge}`;
    })
    .join("\n");
}

// An OAuthClientProvider for one MCP server, held in memory, for the SDK v1
// client and the v2 one alike. A flow the SDK starts ends at
// redirectToAuthorization: authorizationUrl holds that URL until consent()
// follows it.
export class TestOAuthClient {
  constructor({ name = "taskbox-tests", redirectUrl = "http://127.0.0.1:8765/callback" } = {}) {
    this._redirectUrl = redirectUrl;
    this._name = name;
    this._client = undefined;
    this._tokens = undefined;
    this._verifier = undefined;
    this._discovery = undefined;
    this.authorizationUrl = undefined;
    this.authorizations = []; // every URL the SDK sent the browser to
    this.savedTokens = []; // every token response, in order
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: this._name,
      redirect_uris: [this._redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return randomBytes(16).toString("hex");
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(info) {
    this._client = info;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(tokens) {
    this._tokens = tokens;
    this.savedTokens.push(tokens);
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = new URL(url);
    this.authorizations.push(this.authorizationUrl);
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    if (!this._verifier) throw new Error("no PKCE code verifier saved");
    return this._verifier;
  }
  saveDiscoveryState(s) {
    this._discovery = s;
  }
  discoveryState() {
    return this._discovery;
  }
  invalidateCredentials(what) {
    if (what === "all" || what === "client") this._client = undefined;
    if (what === "all" || what === "tokens") this._tokens = undefined;
    if (what === "all" || what === "verifier") this._verifier = undefined;
    if (what === "all" || what === "discovery") this._discovery = undefined;
  }
}

// A cookie jar for one browser: path-scoped cookies of one host.
class CookieJar {
  constructor() {
    this.cookies = new Map(); // "name path" -> { name, value, path }
  }
  take(res) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";").map((s) => s.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = "/";
      let gone = value === "";
      for (const a of attrs) {
        const [k, v = ""] = a.split("=");
        if (k.toLowerCase() === "path") path = v;
        if (k.toLowerCase() === "expires" && Date.parse(v) <= Date.now()) gone = true;
        if (k.toLowerCase() === "max-age" && Number(v) <= 0) gone = true;
      }
      if (gone) this.cookies.delete(`${name} ${path}`);
      else this.cookies.set(`${name} ${path}`, { name, value, path });
    }
  }
  header(url) {
    const p = new URL(url).pathname;
    return [...this.cookies.values()]
      .filter((c) => p === c.path || p.startsWith(c.path.endsWith("/") ? c.path : c.path + "/"))
      .map((c) => `${c.name}=${c.value}`)
      .join("; ");
  }
}

// The browser's part: follows client.authorizationUrl (redirects, with a
// fresh cookie jar) until the redirect_uri, and resolves the callback URL
// (its searchParams hold code, state and iss) . The request is forgotten
// (authorizationUrl undefined) so a later flow is a new one. fetchFn logs
// the browser's requests if given.
export async function consent(client, fetchFn = fetch) {
  if (!client.authorizationUrl) throw new Error("consent: the client asked for no authorization");
  let url = client.authorizationUrl.href;
  client.authorizationUrl = undefined;
  const jar = new CookieJar();
  for (let hops = 0; hops < 10; hops++) {
    if (url.startsWith(client.redirectUrl)) {
      const callback = new URL(url);
      if (!callback.searchParams.get("code"))
        throw new Error(`authorization refused: ${callback.searchParams.get("error")}: ${callback.searchParams.get("error_description")}`);
      return callback;
    }
    const cookie = jar.header(url);
    const res = await fetchFn(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
    jar.take(res);
    const location = res.headers.get("location");
    if (res.status < 300 || res.status > 399 || !location)
      throw new Error(`consent: ${url} answered ${res.status} without a redirect: ${(await res.text()).slice(0, 500)}`);
    await res.arrayBuffer();
    url = new URL(location, url).href;
  }
  throw new Error("consent: more than 10 redirects");
}

// A JWT's header and claims, for assertions and the transcript (its
// signature is not shown: it is cut).
export function jwtParts(token) {
  return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
}
