// Module resolution hooks that give the conformance suite the `fs.globSync`
// export it imports at start (a Node 22 API; only its tier-check command
// calls it). Where node:fs lacks it, every `fs` import from outside the shim
// resolves to a shim that re-exports node:fs plus a stub.
import fs from "node:fs";

const shim = new URL("./fs-globsync-shim.mjs", import.meta.url).href;
const needed = typeof fs.globSync !== "function";

export async function resolve(specifier, context, next) {
  if (needed && (specifier === "fs" || specifier === "node:fs") &&
      context.parentURL !== shim)
    return { url: shim, shortCircuit: true };
  return next(specifier, context);
}
