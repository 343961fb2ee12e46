/**
 * JSON Schema `format` checks of every MCP validator (`byte`, `uri`). The implementation is the
 * generated code's runtime, `src/gen-runtime/formats.js`, which the code generator imports too;
 * this module re-exports it for `src/`.
 */
export * from "../gen-runtime/formats.js";
