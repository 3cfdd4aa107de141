// user: text as markdown, images as thumbnails.

export default function renderUser(message, el, x) {
  el.appendChild(x.content(message.content, { asMarkdown: true }));
}
