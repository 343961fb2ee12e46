/**
 * Which advertised capability each MCP method needs (MCP lifecycle, "Capability Negotiation", and
 * the per-feature pages of the server and client specs, 2025-06-18).
 *
 * A requirement names the side whose initialize message must advertise it (`server`: the
 * `capabilities` of the InitializeResult; `client`: the `capabilities` of the InitializeRequest
 * params) and a path into that object. The first path segment must be an object (present
 * capability); a second segment (`listChanged`, `subscribe`) must be `true`.
 */
import { definesServerCapability } from "../mcp/versions.js";
import type { Direction } from "./types.js";

export interface CapabilityRequirement {
  readonly side: "server" | "client";
  readonly path: readonly string[];
  /**
   * Only enforced in protocol versions whose schema defines the capability (`ServerCapabilities`
   * has `path[0]`; src/mcp/versions.ts `definesServerCapability`).
   */
  readonly whereDefined?: true;
}

const server = (path: string[], whereDefined?: "where defined"): CapabilityRequirement =>
  whereDefined === undefined ? { side: "server", path } : { side: "server", path, whereDefined: true };
const client = (path: string[]): CapabilityRequirement => ({ side: "client", path });

/** Requests the client sends that need a server capability. */
const C2S_REQUESTS: ReadonlyMap<string, CapabilityRequirement> = new Map([
  ["tools/list", server(["tools"])],
  ["tools/call", server(["tools"])],
  ["prompts/list", server(["prompts"])],
  ["prompts/get", server(["prompts"])],
  ["resources/list", server(["resources"])],
  ["resources/templates/list", server(["resources"])],
  ["resources/read", server(["resources"])],
  ["resources/subscribe", server(["resources", "subscribe"])],
  ["resources/unsubscribe", server(["resources", "subscribe"])],
  ["logging/setLevel", server(["logging"])],
  // The `completions` server capability appeared in 2025-03-26; before it completion/complete
  // needed no capability.
  ["completion/complete", server(["completions"], "where defined")],
]);

/** Requests the server sends that need a client capability. */
const S2C_REQUESTS: ReadonlyMap<string, CapabilityRequirement> = new Map([
  ["sampling/createMessage", client(["sampling"])],
  ["roots/list", client(["roots"])],
  ["elicitation/create", client(["elicitation"])],
]);

/** Notifications the server sends that it must have advertised. */
const S2C_NOTIFICATIONS: ReadonlyMap<string, CapabilityRequirement> = new Map([
  ["notifications/tools/list_changed", server(["tools", "listChanged"])],
  ["notifications/prompts/list_changed", server(["prompts", "listChanged"])],
  ["notifications/resources/list_changed", server(["resources", "listChanged"])],
  ["notifications/resources/updated", server(["resources", "subscribe"])],
  ["notifications/message", server(["logging"])],
]);

/** Notifications the client sends that it must have advertised. */
const C2S_NOTIFICATIONS: ReadonlyMap<string, CapabilityRequirement> = new Map([["notifications/roots/list_changed", client(["roots", "listChanged"])]]);

/** The methods that need a capability as requests (either direction): `session/missing-capability` runs for these only. */
export const CAPABILITY_REQUEST_METHODS: readonly string[] = [...C2S_REQUESTS.keys(), ...S2C_REQUESTS.keys()];

/** The methods that need a capability as notifications (either direction): `session/unadvertised-notification` runs for these only. */
export const CAPABILITY_NOTIFICATION_METHODS: readonly string[] = [...C2S_NOTIFICATIONS.keys(), ...S2C_NOTIFICATIONS.keys()];

/**
 * A requirement table that remembers its last answer: most traffic repeats one method, and the
 * method string of each parsed message is a new string that a Map lookup would hash first.
 */
class Memo {
  private lastMethod: string | undefined = undefined;
  private lastReq: CapabilityRequirement | undefined = undefined;

  constructor(private readonly table: ReadonlyMap<string, CapabilityRequirement>) {}

  get(method: string): CapabilityRequirement | undefined {
    if (method === this.lastMethod) return this.lastReq;
    const req = this.table.get(method);
    this.lastMethod = method;
    this.lastReq = req;
    return req;
  }
}

const MEMO_C2S_REQUESTS = new Memo(C2S_REQUESTS);
const MEMO_S2C_REQUESTS = new Memo(S2C_REQUESTS);
const MEMO_C2S_NOTIFICATIONS = new Memo(C2S_NOTIFICATIONS);
const MEMO_S2C_NOTIFICATIONS = new Memo(S2C_NOTIFICATIONS);

/**
 * The capability `method` needs when sent in `direction` as a `kind`, or undefined when it needs
 * none (or the requirement starts after `version`).
 */
export function requiredCapability(direction: Direction, kind: "request" | "notification", method: string, version: string): CapabilityRequirement | undefined {
  const table = kind === "request" ? (direction === "c2s" ? MEMO_C2S_REQUESTS : MEMO_S2C_REQUESTS) : direction === "c2s" ? MEMO_C2S_NOTIFICATIONS : MEMO_S2C_NOTIFICATIONS;
  const req = table.get(method);
  if (req === undefined) return undefined;
  if (req.whereDefined && !definesServerCapability(version, req.path[0]!)) return undefined;
  return req;
}

/** True when `capabilities` (an initialize capabilities object) satisfies `req.path`. */
export function hasCapability(capabilities: Record<string, unknown>, req: CapabilityRequirement): boolean {
  const path = req.path;
  const top = path[0];
  const flag = path[1];
  if (top === undefined) return true;
  const cap = capabilities[top];
  if (cap === null || typeof cap !== "object" || Array.isArray(cap)) return false;
  if (flag === undefined) return true;
  return (cap as Record<string, unknown>)[flag] === true;
}
