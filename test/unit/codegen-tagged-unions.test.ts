/**
 * The tagged-union fast path of the generated validators (`dispatchTaggedUnions` in
 * codegen/generate.mjs): a union validator that is only an `anyOf` of branch validators first tries
 * the branch the value's `type`/`method` constant names. It must change nothing but the cost: for
 * every generated revision, the validators are compared with the same generated module with the
 * fast path taken out (the two marked lines per union removed), definition by definition, on
 * instances generated from the revision's schema, their single-field mutations (wrong constants,
 * dropped and extra properties, wrong types...) and, where ../shared has them, the official
 * examples and their structural mutations: same verdict and the same ajv errors (`.errors`) every time.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MCP_FORMATS } from "../../src/gen-runtime/formats.js";
import { GENERATED_VERSIONS } from "../../src/gen/mcp/index.js";
import { SchemaInstanceGenerator, structuralMutations, type Json } from "../helpers/schema-instances.js";
import { sharedPath } from "../helpers/requires.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const FAST_PATH = /^[ \t]*\/\/ tagged union: .*\n[ \t]*if\(data && typeof data == "object"\)\{ switch\(data\["(?:type|method)"\]\)\{ .*\} \}\n/gm;

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
type Validators = Readonly<Record<string, Validator>>;

/** The validators of a generated module's source text (a CommonJS factory of MCP_FORMATS). */
function load(file: string, text: string): Validators {
  const module = { exports: undefined as unknown };
  new Function("module", "exports", "require", text)(module, {}, createRequire(file));
  return (module.exports as (formats: typeof MCP_FORMATS) => Validators)(MCP_FORMATS);
}

/** Official examples of a revision, by definition (directory name), when ../shared has them. */
function examples(version: string): Array<{ definition: string; value: Json }> {
  const dir = sharedPath(`mcp-schema/${version}/examples`);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((definition) =>
    readdirSync(path.join(dir, definition))
      .filter((f) => f.endsWith(".json"))
      .map((f) => ({ definition, value: JSON.parse(readFileSync(path.join(dir, definition, f), "utf8")) as Json })),
  );
}

describe("generated validators: tagged-union fast path", () => {
  for (const version of GENERATED_VERSIONS) {
    it(`${version}: same verdicts and errors with and without the fast path`, () => {
      const file = path.join(ROOT, `src/gen/mcp/${version}/validators.cjs`);
      const text = readFileSync(file, "utf8");
      const stripped = text.replace(FAST_PATH, "");
      const unions = (text.match(FAST_PATH) ?? []).length;
      expect(unions, "unions with a fast path").toBeGreaterThan(0);
      expect(stripped).not.toContain("tagged union");
      const fast = load(file, text);
      const plain = load(file, stripped);
      const schema = JSON.parse(readFileSync(path.join(ROOT, `schemas/mcp/${version}/schema.json`), "utf8")) as object;
      const generator = new SchemaInstanceGenerator(schema, { seed: 16 });

      let compared = 0;
      let rejected = 0;
      const differences: string[] = [];
      const compare = (definition: string, data: unknown, what: string): void => {
        const a = fast[definition];
        const b = plain[definition];
        if (a === undefined || b === undefined) return;
        const va = a(data);
        const ea = JSON.stringify(a.errors ?? null);
        const vb = b(data);
        const eb = JSON.stringify(b.errors ?? null);
        compared++;
        if (!vb) rejected++;
        if (va !== vb || (!vb && ea !== eb)) differences.push(`${definition} (${what}): ${va}/${vb} ${ea} vs ${eb}`);
      };
      for (const definition of generator.definitions) {
        let instances;
        try {
          instances = generator.instances(definition, 3);
        } catch {
          continue; // (a definition the generator cannot instantiate: covered by mcp-schema-agreement)
        }
        for (const instance of instances) {
          compare(definition, instance.value, "generated");
          for (const m of generator.mutations(instance, 40)) compare(definition, m.value, `${m.kind} at ${m.pointer}`);
        }
      }
      for (const { definition, value } of examples(version)) {
        compare(definition, value, "official example");
        for (const m of structuralMutations(value, 40)) compare(definition, m.value, `example mutated at ${m.pointer}`);
      }
      expect(differences.slice(0, 10)).toEqual([]);
      expect(compared).toBeGreaterThan(2000);
      expect(rejected).toBeGreaterThan(500);
    });
  }
});
