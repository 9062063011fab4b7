// The model's answers as HTML: markdown-it parses them with raw HTML off (a tag in the text shows as text), and
// DOMPurify cleans what comes out before it reaches the page, since model output is untrusted. Links open in a
// new tab without telling the other site where they came from.
import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";

const parser = new MarkdownIt({ html: false, linkify: true, breaks: false });

// An image from elsewhere is never fetched as the answer renders (its address could carry what the model read): it
// shows as a link the person may open. The page's Content-Security-Policy refuses such a load as well.
parser.renderer.rules.image = (tokens, index) => {
  const token = tokens[index];
  const src = String(token?.attrGet("src") ?? "");
  const alt = token?.content || "image";
  if (src.startsWith("data:image/")) {
    return `<img src="${parser.utils.escapeHtml(src)}" alt="${parser.utils.escapeHtml(alt)}">`;
  }
  return `<a href="${parser.utils.escapeHtml(src)}" data-remote-image>[image: ${parser.utils.escapeHtml(alt)}]</a>`;
};

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** ``text`` as sanitised HTML, ready for ``v-html``. */
export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(parser.render(text), {
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
    FORBID_ATTR: ["style"],
  });
}
