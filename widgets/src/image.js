// Images of a message (ImageContent: base64 `data` + `mimeType`) as thumbnails built from the data itself: a
// data: URL of an allowed type, never a URL the message gives. The transcript and the inspector both draw them.
import { h } from "./dom.js";

/** Image types shown inline; anything else (notably SVG) is named, not displayed. */
export const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * A thumbnail for an ImageContent block, or a note when not displayable. `types`: the image types shown (a
 * narrower set than IMAGE_TYPES for a role that keeps only some); `cls`: more classes for the thumbnail.
 */
export function imageBlock(block, { types = IMAGE_TYPES, cls = "" } = {}) {
  const mime = String(block?.mimeType ?? "").toLowerCase();
  const data = typeof block?.data === "string" ? block.data : "";
  if (!IMAGE_TYPES.has(mime) || !types.has(mime) || !/^[A-Za-z0-9+/=\s]*$/.test(data) || !data) {
    return h("span", { class: "pi-image-note" }, `[image${mime ? ` ${mime}` : ""} not shown]`);
  }
  const img = h("img", { class: ["pi-thumb", cls], alt: `image (${mime})`, loading: "lazy", title: "click to enlarge" });
  img.src = `data:${mime};base64,${data.replace(/\s+/g, "")}`;
  img.addEventListener("click", (ev) => {
    ev.stopPropagation(); // in an inspector row: enlarge the picture, not expand the row
    img.classList.toggle("pi-thumb-large");
  });
  return img;
}
