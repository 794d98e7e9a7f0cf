// The fake envd's file API: GET /files serves a file the way Go's
// http.ServeContent does (sized by stat, so procfs files look empty; one
// byte range answered with 206, an unsatisfiable one with 416), POST /files
// takes a multipart/form-data or application/octet-stream upload and
// creates the parent directories.
import { closeSync, createReadStream, createWriteStream, fstatSync, mkdirSync, openSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";

function sendError(res, status, message) {
  const text = JSON.stringify({ code: status, message });
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(text + "\n");
}

function resolvePath(sbx, path) {
  if (!path) return null;
  if (path === "~" || path.startsWith("~/")) return join(sbx.home, path.slice(1));
  return isAbsolute(path) ? path : join(sbx.home, path);
}

// Parses "bytes=a-b" against size as Go does; returns null for no Range,
// "none" when nothing overlaps, "ignore" for forms the fake does not serve.
function parseRange(header, size) {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return "ignore";
  let start, end;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0) return "none";
    start = Math.max(0, size - n);
    end = size - 1;
  } else {
    start = Number(m[1]);
    if (start >= size) return "none";
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (end < start) return "ignore";
  }
  return { start, end };
}

export function handleDownload(sbx, req, res, url) {
  const path = resolvePath(sbx, url.searchParams.get("path"));
  if (!path) return sendError(res, 400, "path is required");
  // Opened once and sized by that descriptor, as envd's os.Open and Stat:
  // a file renamed over the path meanwhile (a supervisor's new record) is
  // served whole from the one that was opened, never cut at the other's size.
  let fd;
  let st;
  try {
    fd = openSync(path, "r");
    st = fstatSync(fd);
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    if (e.code === "ENOENT") return sendError(res, 404, `path '${path}' does not exist`);
    return sendError(res, 500, `error checking if path exists '${path}': ${e.message}`);
  }
  if (st.isDirectory()) {
    closeSync(fd);
    return sendError(res, 400, `path '${path}' is a directory`);
  }
  const size = st.size;
  const headers = {
    "Content-Type": "application/octet-stream",
    "Accept-Ranges": "bytes",
    "Last-Modified": st.mtime.toUTCString(),
    "Content-Disposition": `inline; filename="${basename(path)}"`,
    Vary: "Accept-Encoding",
  };
  const range = parseRange(req.headers.range, size);
  if (range === "none") {
    closeSync(fd);
    res.writeHead(416, { "Content-Range": `bytes */${size}`, "Content-Type": "text/plain; charset=utf-8" });
    return res.end("invalid range: failed to overlap\n");
  }
  if (range && range !== "ignore") {
    const len = range.end - range.start + 1;
    res.writeHead(206, {
      ...headers,
      "Content-Range": `bytes ${range.start}-${range.end}/${size}`,
      "Content-Length": len,
    });
    if (req.method === "HEAD" || len === 0) {
      closeSync(fd);
      return res.end();
    }
    return streamFile(res, fd, range.start, range.end);
  }
  res.writeHead(200, { ...headers, "Content-Length": size });
  if (req.method === "HEAD" || size === 0) {
    closeSync(fd);
    return res.end();
  }
  return streamFile(res, fd, 0, size - 1);
}

// Streams bytes start..end of the open fd, and closes it.
function streamFile(res, fd, start, end) {
  const rs = createReadStream(null, { fd, start, end, autoClose: true });
  rs.on("error", () => res.destroy());
  // A client gone before the end: the descriptor goes with the stream.
  res.on("close", () => rs.destroy());
  rs.pipe(res);
}

function entryJson(path) {
  return { path, name: basename(path), type: "file" };
}

async function writeFileFrom(path, readable) {
  mkdirSync(dirname(path), { recursive: true });
  await pipeline(readable, createWriteStream(path, { mode: 0o666 }));
}

export async function handleUpload(sbx, req, res, url) {
  const ctype = (req.headers["content-type"] || "").toLowerCase();
  const defaultPath = resolvePath(sbx, url.searchParams.get("path"));
  try {
    if (ctype.startsWith("application/octet-stream")) {
      if (!defaultPath) return sendError(res, 400, "path is required for an octet-stream upload");
      await writeFileFrom(defaultPath, req);
      return sendJsonList(res, [entryJson(defaultPath)]);
    }
    if (ctype.startsWith("multipart/")) {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const form = await new Response(Buffer.concat(chunks), {
        headers: { "content-type": req.headers["content-type"] },
      }).formData();
      const written = [];
      for (const [field, value] of form.entries()) {
        if (field !== "file" || typeof value === "string") continue;
        const path = defaultPath || resolvePath(sbx, value.name);
        if (!path) return sendError(res, 400, "a file part needs a path");
        await writeFileFrom(path, Readable.fromWeb(value.stream()));
        written.push(entryJson(path));
      }
      return sendJsonList(res, written);
    }
  } catch (e) {
    return sendError(res, e.code === "EISDIR" ? 400 : 500, `error writing file: ${e.message}`);
  }
  return sendError(res, 400, `unsupported content type: ${ctype}, expected multipart/form-data or application/octet-stream`);
}

function sendJsonList(res, list) {
  const text = JSON.stringify(list);
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(text);
}
