/**
 * The generated validators (src/gen/mcp/<v>/validators.js) are ajv standalone code rewritten by
 * codegen/generate.mjs (`relativeInstancePaths`) so that nested validator calls allocate nothing
 * on valid data: each validator reports paths relative to its own data and the caller prefixes a
 * failed callee's errors. This test compiles the same schema with ajv at run time (the options
 * and formats of the code generator, no rewrite) and requires identical verdicts and identical
 * error objects (instancePath, schemaPath, keyword, params) on generated instances of every
 * definition and on single-field and structural mutations of them, which fail at every depth.
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { describe, expect, it } from "vitest";
import { GENERATED_PROTOCOLS } from "../../src/gen/mcp/index.js";
import { MCP_FORMATS } from "../../src/mcp/formats.js";
import { SchemaInstanceGenerator, structuralMutations, type Json } from "../helpers/schema-instances.js";

// draft-07 versions compile with plain Ajv, as in the generator.
const VERSIONS = ["2024-11-05", "2025-06-18"];

describe("generated validators report the error objects of unrewritten ajv code", () => {
  for (const version of VERSIONS) {
    it(
      version,
      () => {
        const generated = GENERATED_PROTOCOLS[version]!.validators;
        const schema = JSON.parse(readFileSync(new URL(`../../schemas/mcp/${version}/schema.json`, import.meta.url), "utf8")) as Record<string, unknown>;
        const ajv = new Ajv({ strict: false, allowUnionTypes: true, allErrors: false, messages: false });
        // The generator's precedence: src/mcp/formats.ts, then ajv-formats for the others.
        for (const [name, format] of Object.entries(fullFormats)) if (!(name in MCP_FORMATS)) ajv.addFormat(name, format);
        for (const [name, fn] of Object.entries(MCP_FORMATS)) ajv.addFormat(name, fn as (v: string) => boolean);
        const id = `https://orchestra-stdio.invalid/test/${version}/schema.json`;
        ajv.addSchema({ ...schema, $id: id });
        const runtime = (name: string) => ajv.getSchema(`${id}#/definitions/${name}`)!;
        const generator = new SchemaInstanceGenerator(schema, { seed: 11 });
        let failures = 0;
        let nested = 0;
        const compare = (name: string, data: unknown): void => {
          const ours = generated[name]!;
          const theirs = runtime(name);
          const verdict = ours(data);
          expect(theirs(data)).toBe(verdict);
          if (verdict) return;
          failures++;
          const strip = (errors: unknown[] | null | undefined) =>
            (errors ?? []).map((e) => {
              const { instancePath, schemaPath, keyword, params } = e as Record<string, unknown>;
              return { instancePath, schemaPath, keyword, params };
            });
          const mine = strip(ours.errors);
          if (mine.some((e) => (e.instancePath as string).split("/").length > 2)) nested++;
          expect(mine, `${name} ${JSON.stringify(data).slice(0, 200)}`).toEqual(strip(theirs.errors));
        };
        const unions = ["JSONRPCMessage", "ClientRequest", "ServerResult", "ServerRequest", "ClientResult", "ServerNotification"].filter((n) => n in generated);
        for (const name of generator.definitions) {
          if (!(name in generated)) continue;
          for (const instance of generator.instances(name, 2)) {
            compare(name, instance.value);
            for (const m of generator.mutations(instance, 25)) {
              compare(name, m.value);
              for (const u of unions) compare(u, m.value);
            }
            for (const m of structuralMutations(instance.value as Json, 10)) compare(name, m.value);
          }
        }
        expect(failures).toBeGreaterThan(1000);
        expect(nested).toBeGreaterThan(100);
      },
      300_000,
    );
  }
});
