// compactionSummary: the summary that replaced older history.

export default function renderCompactionSummary(message, el, x) {
  el.appendChild(
    x.h(
      "div",
      { class: "pi-summary-card pi-compaction" },
      x.h(
        "div",
        { class: "pi-summary-title" },
        `Compaction summary — ${x.fmtInt(Number(message.tokensBefore))} tokens before`,
      ),
      x.markdown(message.summary ?? ""),
    ),
  );
}
