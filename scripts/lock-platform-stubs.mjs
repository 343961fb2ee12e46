#!/usr/bin/env node
// Adds lockfile entries for optional, platform-specific packages that the npm registry reachable
// from our build machines does not serve (404), so that `npm ci` accepts the lockfile. Each entry
// carries its `os`/`cpu` constraints, so npm skips it on Linux x64 and, elsewhere, installs it by
// name and version. Run after any `npm install` that rewrites package-lock.json:
//   node scripts/lock-platform-stubs.mjs
import { readFileSync, writeFileSync } from "node:fs";

const LOCK = new URL("../package-lock.json", import.meta.url);
const STUBS = {
  "node_modules/@matrixai/quic-darwin-arm64": { version: "2.0.9", cpu: ["arm64"], os: ["darwin"], optional: true, license: "Apache-2.0" },
  "node_modules/@matrixai/quic-darwin-universal": { version: "2.0.9", cpu: ["x64", "arm64"], os: ["darwin"], optional: true, license: "Apache-2.0" },
  "node_modules/@matrixai/quic-darwin-x64": { version: "2.0.9", cpu: ["x64"], os: ["darwin"], optional: true, license: "Apache-2.0" },
  "node_modules/@matrixai/quic-win32-x64": { version: "2.0.9", cpu: ["x64"], os: ["win32"], optional: true, license: "Apache-2.0" },
  "node_modules/napi-windows-process-start-time": { version: "0.1.0", os: ["win32"], dev: true, optional: true, license: "MIT" },
};

const lock = JSON.parse(readFileSync(LOCK, "utf8"));
let added = 0;
for (const [key, entry] of Object.entries(STUBS)) {
  if (!lock.packages[key]) {
    lock.packages[key] = entry;
    added++;
  }
}
const ordered = {};
for (const key of Object.keys(lock.packages).sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0))) {
  ordered[key] = lock.packages[key];
}
lock.packages = ordered;
writeFileSync(LOCK, JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-platform-stubs: ${added} entr${added === 1 ? "y" : "ies"} added`);
