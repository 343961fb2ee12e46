/** docs/validate.md's rules table says what the rule catalogue says (ids, severities, descriptions, spec). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RULE_LIST } from "../../src/validate/rules.js";
import { PROJECT_ROOT } from "../helpers/requires.js";

describe("docs/validate.md", () => {
  it("lists every rule, in catalogue order, with its severity, description and spec reference", () => {
    const text = readFileSync(`${PROJECT_ROOT}/docs/validate.md`, "utf8");
    const rows = text
      .split("\n")
      .filter((l) => /^\| `[a-z]+\/[a-z0-9-]+` \|/.test(l))
      .map((l) =>
        l
          .slice(1, -1)
          .split(/(?<!\\)\|/)
          .map((c) => c.trim().replace(/\\\|/g, "|")),
      );
    expect(rows).toEqual(RULE_LIST.map((r) => [`\`${r.id}\``, r.severity, r.description, r.spec]));
  });
});
