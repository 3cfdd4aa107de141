// An installed plugin's renderers (src/plugins.js): the live widget runs them from its `renderers` trait; a saved
// transcript carries them and runs them only when the output is trusted; a live view writing its state back keeps
// them. The example plugin's own renderer (examples/pi-notebook-tickets) is used, with hostile message content.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { keepRenderers, savedRenderers, untrustedNote } from "../src/plugins.js";
import { savedState } from "../src/snapshot.js";
import { staticModel } from "../src/static_model.js";
import * as transcript from "../src/transcript.js";
import { messagesOf, mount, ready, win } from "./setup.js";

const TICKET_JS = readFileSync(
  new URL("../../examples/pi-notebook-tickets/pi_notebook_tickets/ticket_event.js", import.meta.url),
  "utf8",
);
const EVIL = "<img src=x onerror=\"window.__pwned=1\"><script>window.__pwned=2</script>";
const ticket = { role: "ticketEvent", ticketId: "T-1042", event: "escalated", detail: EVIL, timestamp: 1 };
const saved = { version: 1, messages: [JSON.stringify(ticket)], renderers: { ticketEvent: TICKET_JS } };

async function draw(state) {
  const el = win.document.createElement("div");
  win.document.body.appendChild(el);
  transcript.default.render({ model: staticModel(state), el });
  await ready(el);
  return el;
}

test("the live widget draws a plugin's role with the plugin's renderer; the message's text stays text", async () => {
  const { el } = mount(transcript, {
    messages: [ticket], visibility: [], streaming: null, show_hidden: false, title: "", renderers: { ticketEvent: TICKET_JS },
  });
  await ready(el);
  const [article] = messagesOf(el);
  const line = article.querySelector(".ticket-event");
  assert.equal(line.dataset.ticket, "T-1042");
  assert.equal(line.querySelector("[data-badge]")?.textContent ?? line.firstChild.textContent, "escalated");
  assert.ok(line.textContent.includes(EVIL), "the detail is shown as the text it is");
  assert.equal(el.querySelector("img, script"), null);
  assert.equal(win.__pwned, undefined);
});

test("a saved transcript's plugin renderers run only when the output is trusted", async () => {
  const trusted = savedState("transcript", saved, { trusted: true });
  assert.deepEqual(Object.keys(trusted.renderers), ["ticketEvent"]);
  const drawn = await draw(trusted);
  assert.ok(drawn.querySelector("article[data-role=ticketEvent] .ticket-event"));

  const untrusted = savedState("transcript", saved); // the default: not trusted
  assert.deepEqual(untrusted.renderers, {});
  const generic = await draw(untrusted);
  assert.equal(generic.querySelector(".ticket-event"), null);
  assert.ok(generic.querySelector("article[data-role=ticketEvent] .pi-unknown"), "the generic view instead");
  assert.equal(win.__pwned, undefined);
});

test("only string sources are taken; anything else in the saved data is ignored", () => {
  assert.deepEqual(savedRenderers({ renderers: { a: "export default () => {}", b: 3, c: "  ", d: { x: 1 } } }), {
    a: "export default () => {}",
  });
  assert.deepEqual(savedRenderers({ renderers: ["x"] }), {});
  assert.deepEqual(savedRenderers(null), {});
  assert.deepEqual(savedState("inspector", saved, { trusted: true }).renderers, undefined);
});

test("a live view's state written back keeps the saved form's plugin renderers, and only those", () => {
  const next = { version: 1, messages: ["{}"], renderers: { mine: "export default () => {}" } };
  assert.deepEqual(keepRenderers(saved, next).renderers, { ticketEvent: TICKET_JS });
  assert.equal("renderers" in keepRenderers({ version: 1 }, next), false);
});

test("an untrusted notebook says which renderers did not run", () => {
  const note = untrustedNote(["ticketEvent", "orderNote"], win.document);
  assert.equal(note.dataset.untrustedRenderers, "ticketEvent,orderNote");
  assert.match(note.textContent, /not trusted: the renderers saved with it for ticketEvent, orderNote did not run/);
});
