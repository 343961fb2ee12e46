/**
 * The reference orchestrator's prompts (`list_prompts`, `prompt_get`; orchestra-protocol.md
 * "Messages": `PromptDefinition{name, description, arguments}`, `PromptGetResponse{description,
 * messages: PromptMessage{role, content: ContentBlock{type "text"|"resource", text}}}`).
 *
 * A `resource` block's `text` is a storage path (the bridge embeds that entry's contents).
 */

/** One argument a prompt accepts (`PromptArgument`). */
export interface PromptArgumentSpec {
  name: string;
  description?: string;
  required?: boolean;
}

/** One rendered message (`PromptMessage` with its `ContentBlock`). */
export type PromptMessageSpec =
  | {
      role: "user" | "assistant";
      type: "text" | "resource";
      /** The text, or for `resource` the storage path (or a resource's own URI). */
      text: string;
    }
  | {
      role: "user" | "assistant";
      type: "image" | "audio";
      /** The media, base64 (sent as a `data:` URL in `ContentBlock.text`, docs/mcp-orchestra-mapping.md). */
      data: string;
      mimeType: string;
    };

/** A prompt served by the orchestrator. */
export interface PromptSpec {
  name: string;
  description: string;
  arguments: PromptArgumentSpec[];
  /**
   * Renders the messages for `args` (every required argument is present: the registry checks);
   * may be async. A throw (or rejection) fails the `prompts/get` with the prompt's name and the
   * error's message.
   */
  render(args: Readonly<Record<string, string>>): RenderedPrompt | Promise<RenderedPrompt>;
}

/** What {@link PromptSpec.render} gives. */
export interface RenderedPrompt {
  description?: string;
  messages: PromptMessageSpec[];
}

/** Thrown for an unknown prompt or a missing required argument. */
export class PromptError extends Error {
  override readonly name = "PromptError";
}

/** Thrown when a prompt's `render` throws or gives no `messages` array; the message names the prompt. */
export class PromptRenderError extends Error {
  override readonly name = "PromptRenderError";
}

/** A set of prompts keyed by name. */
export class PromptRegistry {
  private readonly prompts = new Map<string, PromptSpec>();

  /** @param prompts initial prompts */
  constructor(prompts: Iterable<PromptSpec> = []) {
    for (const p of prompts) this.register(p);
  }

  /**
   * Adds a prompt.
   * @throws PromptError when the name is empty or taken
   */
  register(prompt: PromptSpec): this {
    if (typeof prompt.name !== "string" || prompt.name === "") throw new PromptError("a prompt needs a non-empty name");
    if (this.prompts.has(prompt.name)) throw new PromptError(`prompt ${JSON.stringify(prompt.name)} is already registered`);
    this.prompts.set(prompt.name, prompt);
    return this;
  }

  /** All prompts in registration order. */
  list(): PromptSpec[] {
    return [...this.prompts.values()];
  }

  /**
   * Renders prompt `name` (awaiting an async `render`).
   * @throws PromptError for an unknown prompt or a missing required argument
   * @throws PromptRenderError when `render` throws or rejects (`prompt <name>: <message>`) or
   *   gives no `messages` array
   */
  async get(name: string, args: Readonly<Record<string, string>>): Promise<{ description: string; messages: PromptMessageSpec[] }> {
    const prompt = this.prompts.get(name);
    if (!prompt) throw new PromptError(`unknown prompt ${JSON.stringify(name)}`);
    const missing = prompt.arguments.filter((a) => a.required && !Object.hasOwn(args, a.name)).map((a) => a.name);
    if (missing.length > 0) throw new PromptError(`prompt ${name} requires ${missing.join(", ")}`);
    let rendered: RenderedPrompt;
    try {
      rendered = await prompt.render(args);
    } catch (e) {
      throw new PromptRenderError(`prompt ${name}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (typeof rendered !== "object" || rendered === null || !Array.isArray(rendered.messages)) {
      throw new PromptRenderError(`prompt ${name}: render must give {messages: [...]}`);
    }
    return { description: rendered.description ?? prompt.description, messages: rendered.messages };
  }
}

/** `greet {name, style?}`: one user message asking for a greeting. */
export const greetPrompt: PromptSpec = {
  name: "greet",
  description: "Asks the model to greet someone.",
  arguments: [
    { name: "name", description: "Who to greet.", required: true },
    { name: "style", description: "Tone of the greeting, e.g. formal." },
  ],
  render(args) {
    const style = args.style ? ` in a ${args.style} style` : "";
    return { messages: [{ role: "user", type: "text", text: `Please greet ${args.name}${style}.` }] };
  },
};

/** `review {path}`: asks for a review of a storage entry, embedding it. */
export const reviewPrompt: PromptSpec = {
  name: "review",
  description: "Asks the model to review a document from storage (embedded in the prompt).",
  arguments: [{ name: "path", description: "Storage path of the document.", required: true }],
  render(args) {
    return {
      description: `Review of ${args.path}`,
      messages: [
        { role: "user", type: "text", text: "Please review the following document." },
        { role: "user", type: "resource", text: args.path! },
      ],
    };
  },
};

/** The built-in prompts, fresh array each call. */
export function builtinPrompts(): PromptSpec[] {
  return [greetPrompt, reviewPrompt];
}
