// bashExecution: a terminal-style block — `$ command`, coloured output, exit code and badges.

import { hasMasked, maskedBadge } from "./masked.js";

export default function renderBash(message, el, x) {
  const term = x.h("div", { class: "pi-term" });
  term.appendChild(
    x.h(
      "div",
      { class: "pi-term-cmd" },
      x.h("span", { class: "pi-prompt", "aria-hidden": "true" }, "$ "),
      x.h("span", { class: "pi-cmd" }, String(message.command ?? "")),
    ),
  );
  const output = typeof message.output === "string" ? message.output : "";
  if (output) term.appendChild(x.output(output, { ansi: true, cls: "pi-output pi-term-out" }));
  else term.appendChild(x.h("div", { class: "pi-quiet pi-term-empty" }, x.streaming ? "(no output yet)" : "(no output)"));

  const status = x.h("div", { class: "pi-term-status" });
  const code = message.exitCode;
  if (Number.isFinite(code)) {
    const ok = code === 0;
    const b = x.badge(`exit ${code}`, ok ? "ok" : "error", ok ? "exit code 0" : `exit code ${code}`);
    b.dataset.exitCode = String(code);
    status.appendChild(b);
  } else if (x.streaming) {
    status.appendChild(x.badge("running", "neutral", "The command is still running"));
  } else if (!message.cancelled) {
    status.appendChild(x.badge("no exit code", "neutral", "The process did not report an exit code"));
  }
  if (message.cancelled) status.appendChild(x.badge("cancelled", "warn", "The command was cancelled"));
  if (message.truncated) {
    status.appendChild(x.badge("truncated", "warn", "The output was cut; the tail is kept"));
    if (message.fullOutputPath) {
      status.appendChild(
        x.h("span", { class: "pi-fullpath" }, "full output: ", x.h("code", null, String(message.fullOutputPath))),
      );
    }
  }
  if (hasMasked(output, message.command)) status.appendChild(maskedBadge(x));
  if (message.excludeFromContext && x.visibility !== "ui") {
    status.appendChild(x.badge("not sent to the LLM", "ui", "Run with %bash! / !!: excluded from the context"));
  }
  if (message.excludeFromContext) x.article.classList.add("pi-excluded");
  term.appendChild(status);
  el.appendChild(term);
}
