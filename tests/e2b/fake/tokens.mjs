// Test switches for a sandbox's envd access token, changed behind the
// client's back: POST /_fake/sandboxes/{id}/token {"rotate": true} gives the
// sandbox a new token (the API's answers carry it from then on);
// {"reject": true} makes envd refuse every token with its 401 until
// {"reject": false}. Answers null when the path is not one of these.
import { randomBytes } from "node:crypto";

export function tokenControl(fake, method, path, body) {
  const m = /^\/_fake\/sandboxes\/([^/]+)\/token$/.exec(path);
  if (!m || method !== "POST") return null;
  const sbx = fake.sandboxes.get(m[1]);
  if (!sbx) return { status: 404, body: { message: `sandbox "${m[1]}" not found` } };
  if (body.rotate) sbx.token = randomBytes(16).toString("hex");
  if (body.reject !== undefined) sbx.rejectTokens = !!body.reject;
  return { status: 200, body: { rotated: !!body.rotate, rejecting: !!sbx.rejectTokens } };
}

// Whether envd takes the token a request carries.
export function tokenAccepted(sbx, given) {
  return given === sbx.token && !sbx.rejectTokens;
}
