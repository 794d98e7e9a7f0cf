// Connect protocol framing for the fake envd: 5-byte envelopes (a flags byte
// and a big-endian uint32 length) carrying proto-JSON messages.

export const FLAG_COMPRESSED = 0x01;
export const FLAG_END_STREAM = 0x02;

// Encodes one envelope around a JSON-serialisable message.
export function envelope(flags, message) {
  const payload = Buffer.from(JSON.stringify(message), "utf8");
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

// Splits a whole request body into envelopes; throws on a torn frame.
export function parseEnvelopes(body) {
  const out = [];
  let at = 0;
  while (at < body.length) {
    if (body.length - at < 5) throw new Error("truncated envelope header");
    const flags = body.readUInt8(at);
    const len = body.readUInt32BE(at + 1);
    if (body.length - at - 5 < len) throw new Error("truncated envelope payload");
    out.push({ flags, data: body.subarray(at + 5, at + 5 + len) });
    at += 5 + len;
  }
  return out;
}

// Connect error codes and the HTTP status a unary call answers them with.
const HTTP_OF_CODE = {
  canceled: 499,
  unknown: 500,
  invalid_argument: 400,
  deadline_exceeded: 504,
  not_found: 404,
  already_exists: 409,
  permission_denied: 403,
  resource_exhausted: 429,
  failed_precondition: 400,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
  unauthenticated: 401,
};

export class ConnectError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// Answers a unary Connect call with an error.
export function sendUnaryError(res, err) {
  const status = HTTP_OF_CODE[err.code] || 500;
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ code: err.code, message: err.message }));
}

// The base64 that proto-JSON uses for bytes fields.
export function bytesToJson(buf) {
  return Buffer.from(buf).toString("base64");
}

export function bytesFromJson(text) {
  return Buffer.from(text || "", "base64");
}
