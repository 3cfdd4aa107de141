// Pi-JSON AgentMessages of every role (camelCase, as pi_notebook syncs them), for the tests.

export const T0 = 1735689600000;

export const usage = (input, output, total = 0, cacheRead = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite: 0,
  totalTokens: input + output + cacheRead,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
});

export const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

export function session() {
  return [
    { role: "compactionSummary", summary: "Earlier we **set up** the project.", tokensBefore: 50000, timestamp: T0 },
    {
      role: "user",
      content: [
        { type: "text", text: "List the files, *please*." },
        { type: "image", data: PNG_1PX, mimeType: "image/png" },
      ],
      timestamp: T0 + 1000,
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "The user wants the file list.", thinkingSignature: "SIG-SECRET-abc" },
        { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: "ENCRYPTED-PAYLOAD", redacted: true },
        { type: "text", text: "Let me check." },
        { type: "toolCall", id: "toolu_01|ABC", name: "bash", arguments: { command: "ls -la" } },
      ],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-20250514",
      usage: usage(1200, 80, 0.0123),
      stopReason: "toolUse",
      timestamp: T0 + 2000,
    },
    {
      role: "toolResult",
      toolCallId: "toolu_01|ABC",
      toolName: "bash",
      content: [{ type: "text", text: "total 0\ndrwxr-xr-x 2 u u 40 ." }],
      details: { truncation: null, fullOutputPath: null },
      isError: false,
      timestamp: T0 + 3000,
    },
    {
      role: "assistant",
      content: [{ type: "text", text: "There is one directory." }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-20250514",
      usage: usage(100, 20),
      stopReason: "stop",
      timestamp: T0 + 4000,
    },
    {
      role: "bashExecution",
      command: "git status",
      output: "On branch main\n\x1b[32mnothing to commit\x1b[0m",
      exitCode: 0,
      cancelled: false,
      truncated: false,
      timestamp: T0 + 5000,
    },
    {
      role: "bashExecution",
      command: "make",
      output: "\x1b[1;31merror:\x1b[0m missing target",
      exitCode: 2,
      cancelled: false,
      truncated: true,
      fullOutputPath: "/tmp/pi-bash-0123456789abcdef.log",
      timestamp: T0 + 5500,
      excludeFromContext: true,
    },
    {
      role: "custom",
      customType: "todo",
      content: "TODO list updated",
      display: false,
      details: { items: 2 },
      timestamp: T0 + 6000,
    },
    { role: "branchSummary", summary: "Explored option *B*.", fromId: "deadbeef", timestamp: T0 + 7000 },
    { role: "notification", text: "ignored by convertToLlm", timestamp: T0 + 7500 },
    {
      role: "assistant",
      content: [{ type: "text", text: "partial" }],
      api: "openai-completions",
      provider: "openai",
      model: "gpt-4o-mini",
      usage: usage(10, 1),
      stopReason: "error",
      errorMessage: "429 rate limited",
      timestamp: T0 + 8000,
    },
    {
      role: "assistant",
      content: [],
      api: "openai-completions",
      provider: "openai",
      model: "gpt-4o-mini",
      usage: usage(0, 0),
      stopReason: "aborted",
      errorMessage: "Request was aborted",
      timestamp: T0 + 9000,
    },
    { role: "user", content: "continue", timestamp: T0 + 10000 },
  ];
}

export const VISIBILITY = ["both", "both", "both", "both", "both", "both", "ui", "llm", "both", "both", "both", "both", "both"];

/** `n` messages of every role (the session above, repeated), with distinct tool call ids and timestamps. */
export function many(n) {
  const base = session();
  return Array.from({ length: n }, (_, i) => {
    const m = structuredClone(base[i % base.length]);
    m.timestamp = i;
    if (m.role === "assistant") {
      m.content = m.content.map((b) => (b.type === "toolCall" ? { ...b, id: `call-${i}` } : b));
    }
    if (m.role === "toolResult") m.toolCallId = `call-${i - 1}`;
    if (m.role === "user" && typeof m.content === "string") m.content = `message ${i}: plain prose to read`;
    return m;
  });
}

/** notebookCell messages (the notebook app's role, pi_notebook/notebook/cell_message.py): a failing cell with a
 * plot, a plain one, a private one, and one cut and interrupted. */
export function notebookCells() {
  return [
    {
      role: "notebookCell",
      source: "x = [3, 1, 2]\nplt.plot(x)\nx['a']",
      executionCount: 5,
      output: "[<matplotlib.lines.Line2D at 0x7f>]\n",
      images: [{ type: "image", data: PNG_1PX, mimeType: "image/png" }],
      error: {
        name: "TypeError",
        value: "list indices must be integers or slices, not str",
        traceback: "Cell In[5], line 3\n      1 x = [3, 1, 2]\n----> 3 x['a']\n\nTypeError: list indices must be integers or slices, not str",
      },
      cancelled: false,
      truncated: false,
      omitted: [],
      timestamp: T0 + 11000,
    },
    { role: "notebookCell", source: "y = 1", executionCount: 6, output: "", images: [], error: null, timestamp: T0 + 12000 },
    {
      role: "notebookCell",
      source: "token = load()",
      executionCount: 7,
      output: "ok\n",
      excludeFromContext: true,
      timestamp: T0 + 13000,
    },
    {
      role: "notebookCell",
      source: "for i in range(10**6): print(i)",
      executionCount: null,
      output: "999998\n999999\n",
      images: [],
      cancelled: true,
      truncated: true,
      fullOutputPath: "/tmp/pi-cell-5.log",
      omitted: ["an image/png of 21.3 MB was left out: larger than 4 MB", "3 more images were left out"],
      timestamp: T0 + 14000,
    },
  ];
}
