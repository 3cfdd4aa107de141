// branchSummary: the summary of a branch the conversation came back from.

export default function renderBranchSummary(message, el, x) {
  el.appendChild(
    x.h(
      "div",
      { class: "pi-summary-card pi-branch" },
      x.h("div", { class: "pi-summary-title" }, "Branch summary — from ", x.h("code", null, String(message.fromId ?? "?"))),
      x.markdown(message.summary ?? ""),
    ),
  );
}
