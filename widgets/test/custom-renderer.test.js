import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { messagesOf, mount, ready } from "./setup.js";
import * as transcript from "../src/transcript.js";
import { getRenderer, registeredRoles } from "../src/registry.js";

const TODO_RENDERER = `
export default function render(message, el, x) {
  const list = x.h("ul", { class: "todo-list" });
  for (const item of message.items) list.appendChild(x.h("li", null, item));
  el.appendChild(list);
  x.header.appendChild(x.badge(message.items.length + " items", "type"));
}
`;

const messages = [
  { role: "todo", items: ["write tests", "<b>ship</b>"], timestamp: 1 },
  { role: "user", content: "hi", timestamp: 2 },
];

async function show(renderers, msgs = messages) {
  const m = mount(transcript, { messages: msgs, visibility: [], streaming: null, show_hidden: false, title: "", renderers });
  await ready(m.el);
  return m;
}

describe("custom renderers", () => {
  test("built-in roles are registered through registerRenderer", () => {
    for (const role of ["user", "assistant", "toolResult", "bashExecution", "compactionSummary", "branchSummary", "custom"]) {
      assert.equal(typeof getRenderer(role), "function", role);
    }
    assert.ok(registeredRoles().length >= 7);
  });

  test("a role renderer from an ES module string (the `renderers` trait)", async () => {
    const { el } = await show({ todo: TODO_RENDERER });
    const [todo, user] = messagesOf(el);
    assert.equal(todo.dataset.role, "todo");
    assert.deepEqual(
      [...todo.querySelectorAll("ul.todo-list li")].map((li) => li.textContent),
      ["write tests", "<b>ship</b>"],
    );
    assert.equal(todo.querySelector("b"), null);
    assert.equal(todo.querySelector("[data-badge=type]").textContent, "2 items");
    assert.equal(todo.querySelector(".pi-unknown"), null);
    assert.equal(user.querySelector(".pi-md p").textContent, "hi");
  });

  test("a renderer that throws falls back to raw JSON and shows the error", async () => {
    const { el } = await show({ todo: "export default function () { throw new Error('boom'); }" });
    const [todo] = messagesOf(el);
    assert.match(todo.querySelector("[data-renderer-error]").textContent, /Custom renderer for role "todo" failed: boom/);
    assert.match(todo.querySelector(".pi-unknown pre.pi-json").textContent, /"write tests"/);
  });

  test("a module that does not load (syntax error, no default) falls back too", async () => {
    const { el } = await show({ todo: "export default function ( {", user: "export const x = 1;" });
    const [todo, user] = messagesOf(el);
    assert.match(todo.querySelector("[data-renderer-error]").textContent, /failed to load/);
    assert.ok(todo.querySelector(".pi-unknown"));
    assert.match(user.querySelector("[data-renderer-error]").textContent, /no default export function/);
    assert.match(user.querySelector("pre.pi-json").textContent, /"content": "hi"/);
  });

  test("change:renderers swaps the renderer live", async () => {
    const { el, model } = await show({});
    assert.ok(messagesOf(el)[0].querySelector(".pi-unknown"));
    model.set("renderers", { todo: TODO_RENDERER });
    await ready(el);
    assert.ok(messagesOf(el)[0].querySelector("ul.todo-list"));
    model.set("renderers", {});
    await ready(el);
    assert.ok(messagesOf(el)[0].querySelector(".pi-unknown"));
  });

  test("a custom renderer can override a built-in role for one view only", async () => {
    const a = await show({ user: "export default (m, el, x) => el.appendChild(x.h('em', {class: 'mine'}, 'custom user'))" });
    const b = await show({});
    assert.equal(a.el.querySelector("em.mine").textContent, "custom user");
    assert.equal(b.el.querySelector("em.mine"), null);
  });

  test("registerRenderer (JS) adds a role for every view and can be undone", async () => {
    const restore = transcript.registerRenderer("todo", (m, el, x) => el.appendChild(x.text(`todo: ${m.items.join(", ")}`)));
    try {
      const { el } = await show({});
      assert.equal(messagesOf(el)[0].querySelector(".pi-msg-body").textContent, "todo: write tests, <b>ship</b>");
    } finally {
      restore();
    }
    assert.equal(getRenderer("todo"), undefined);
    assert.throws(() => transcript.registerRenderer("", () => {}), TypeError);
    assert.throws(() => transcript.registerRenderer("x", "nope"), TypeError);
  });
});
