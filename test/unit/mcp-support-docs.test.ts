/**
 * docs/mcp-support.md's versions table agrees with src/mcp/versions.ts and the generated schema
 * tables: one column per supported revision, in order; a cell is "—" exactly when the revision's
 * schema has none of the row's methods; the batches and tool-argument rows follow the facts; the
 * sentence above the table names the revisions, the newest initialize-based one and the stateless
 * ones. The README's "Protocol versions" sentence names the same revisions per era.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENERATED_TABLES } from "../../src/gen/mcp/catalog.js";
import { allowsBatches, LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS } from "../../src/mcp/versions.js";
import { featuresOf } from "../../src/translate/features.js";
import { PROJECT_ROOT } from "../helpers/requires.js";

const text = readFileSync(`${PROJECT_ROOT}/docs/mcp-support.md`, "utf8");
const cells = (line: string): string[] =>
  line
    .slice(1, -1)
    .split("|")
    .map((c) => c.trim());
const lines = text.split("\n");
const header = lines.findIndex((l) => l.startsWith("| method |"));
const rows = lines
  .slice(
    header + 2,
    lines.findIndex((l, i) => i > header && !l.startsWith("|")),
  )
  .map(cells);

/** Every method of a revision's schema, both directions, requests and notifications. */
function methodsOf(version: string): string[] {
  const { c2s, s2c } = GENERATED_TABLES[version]!.methods;
  return [...Object.keys(c2s), ...Object.keys(s2c)];
}

describe("docs/mcp-support.md versions table", () => {
  it("has one column per supported revision, oldest first", () => {
    expect(header).toBeGreaterThan(0);
    expect(cells(lines[header]!).slice(1)).toEqual([...SUPPORTED_PROTOCOL_VERSIONS]);
  });

  it("marks a method '—' exactly where the revision's schema lacks it", () => {
    const methodRows = rows.filter((r) => r[0]!.includes("`"));
    expect(methodRows.length).toBeGreaterThan(10);
    for (const row of methodRows) {
      const names = [...row[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      SUPPORTED_PROTOCOL_VERSIONS.forEach((version, i) => {
        const defined = methodsOf(version);
        const present = names.some((n) => (n.endsWith("/*") ? defined.some((m) => m.startsWith(n.slice(0, -1))) : defined.includes(n)));
        expect(row[i + 1]!.startsWith("—"), `${row[0]} in ${version}: "${row[i + 1]}"`).toBe(!present);
      });
    }
  });

  it("shows batches and invalid tool arguments as the facts say", () => {
    const batches = rows.find((r) => r[0] === "JSON-RPC batches")!;
    const toolArgs = rows.find((r) => r[0] === "invalid tool arguments")!;
    SUPPORTED_PROTOCOL_VERSIONS.forEach((version, i) => {
      expect(batches[i + 1], version).toBe(allowsBatches(version) ? "✓" : "—");
      expect(toolArgs[i + 1], version).toBe(featuresOf(version).inputErrorsAreToolErrors ? "`isError` result" : "`-32602`");
    });
  });

  it("names the revisions per era above the table", () => {
    const legacy = [...LEGACY_PROTOCOL_VERSIONS].reverse();
    const sentence = text.slice(0, text.indexOf("| method |")).replace(/\s+/g, " ");
    expect(sentence).toContain(`One binary serves MCP ${legacy.join(", ")} (through \`initialize\`: the client's version when supported, else ${LEGACY_PROTOCOL_VERSIONS[0]})`);
    expect(sentence).toContain(`and the stateless ${[...MODERN_PROTOCOL_VERSIONS].reverse().join(", ")} (`);
  });
});

describe("README.md protocol versions", () => {
  it("names the supported revisions per era, as docs/mcp-support.md does", () => {
    const readme = readFileSync(`${PROJECT_ROOT}/README.md`, "utf8");
    const section = readme.slice(readme.indexOf("## Protocol versions")).replace(/\s+/g, " ");
    const legacy = [...LEGACY_PROTOCOL_VERSIONS].reverse().join(", ");
    const modern = [...MODERN_PROTOCOL_VERSIONS].reverse().join(", ");
    expect(section, "README.md › Protocol versions: the sentence listing the revisions").toContain(`One binary serves MCP ${legacy} and the stateless ${modern};`);
  });
});
