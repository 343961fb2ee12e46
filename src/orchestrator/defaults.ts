/** Defaults of the reference orchestrator, in a module light enough for the CLI to import eagerly. */

/** Default initial bidirectional stream credit per QUIC connection (`initialMaxStreamsBidi`). */
export const DEFAULT_MAX_STREAMS = 1000;
