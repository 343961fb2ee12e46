/** Moved to src/framing/frame.ts; this re-export keeps the engine and the orchestrator building until the merge removes it. */
export * from "../framing/frame.js";
