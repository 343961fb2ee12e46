/**
 * Facts derived from an MCP `schema.json` (definition names, method tables, union discriminators,
 * {@link SchemaFacts}). The implementation is the generated code's runtime, `src/gen-runtime/`,
 * which the code generator imports too; this module re-exports it for `src/`.
 */
export * from "../gen-runtime/schema-meta.js";
