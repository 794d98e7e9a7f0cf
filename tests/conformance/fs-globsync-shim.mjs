// node:fs plus a globSync that says it is unavailable (see
// fs-globsync-hooks.mjs).
import fs from "node:fs";
export * from "node:fs";
export default fs;
export function globSync() {
  throw new Error("fs.globSync needs Node 22 or later");
}
