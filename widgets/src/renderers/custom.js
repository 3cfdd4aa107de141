// custom: extension-injected messages, labelled by customType. `display: false` ones are sent to the
// LLM but hidden in Pi's UI: the transcript shows them only when show_hidden is on, marked "LLM only".

export default function renderCustom(message, el, x) {
  x.header.appendChild(x.badge(String(message.customType ?? "custom"), "type", "customType"));
  if (message.display === false && x.visibility !== "llm" && x.visibility !== "none") {
    x.header.appendChild(x.badge("LLM only", "llm", "display: false — hidden in the UI, still sent to the LLM"));
  }
  el.appendChild(x.content(message.content, { asMarkdown: true }));
  if (message.details !== undefined && message.details !== null) {
    el.appendChild(
      x.h(
        "details",
        { class: "pi-details", title: "UI/log data, never sent to the LLM" },
        x.h("summary", null, "details"),
        x.json(message.details),
      ),
    );
  }
}
