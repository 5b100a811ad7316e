/**
 * The HTML a public representation may carry in `description` and in each `translations`
 * description (contract §15 §3 `description`). Portals and agency sites insert it into their
 * pages as it is, so what the integrator stored is reduced here to a fixed allow-list before it
 * is published: the catalogue document (GET /properties, GET /properties/{id}, the
 * `property.published` event) and the feed are built from the output. The private read keeps
 * what was sent.
 *
 * The input is parsed as HTML (sanitize-html on htmlparser2) and written out again from the
 * parse, so nothing survives that the parser did not see as an allowed element or as text:
 * text is always escaped, attributes other than a link's `href` are dropped, and a link keeps
 * only an absolute `http`/`https` URL or a `mailto:` address (the parser has already decoded
 * entities, so `jav&#x09;ascript:` is seen as what a browser would see). Decisions:
 * - Elements outside the list are removed and their text kept. A block container (`div`,
 *   `section`, a table cell, …) leaves a line break where it began and `h1`, `h5`, `h6` become
 *   the nearest allowed heading, so the text keeps its breaks: without them
 *   `<div>Piscina</div><div>Garaje</div>` would read (and be searched) as one word. Not a
 *   paragraph: a `p` where the parser saw a `div` would nest paragraphs, which a browser
 *   parses into another structure than the one written.
 * - The text of `script` and `style` is code, not content: it is removed with them.
 * - Comments, CDATA sections and processing instructions are removed.
 * - A link without an acceptable `href` (relative, protocol-relative, `javascript:`, `data:`,
 *   any other scheme) is removed and its text kept; every kept link gets
 *   `rel="nofollow noopener"` (the listing's author is not vouched for by the portal).
 */
import sanitizeHtml from 'sanitize-html'

/** contract §15: the only elements a public description holds. */
export const DESCRIPTION_TAGS = ['p', 'br', 'ul', 'ol', 'li', 'strong', 'b', 'em', 'i', 'h2', 'h3', 'h4', 'a'] as const
/** The schemes a link's `href` may have; a link must also be absolute (`//host` and paths are refused). */
export const DESCRIPTION_LINK_SCHEMES = ['http', 'https', 'mailto'] as const
export const DESCRIPTION_LINK_REL = 'nofollow noopener'

const ABSOLUTE_LINK = /^(?:https?:\/\/[^\s/?#]|mailto:)/i

/** Elements outside the list whose text is a block of its own: a line break where they begin. */
const BLOCKS = [
  'div',
  'section',
  'article',
  'aside',
  'header',
  'footer',
  'main',
  'nav',
  'address',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'dl',
  'dt',
  'dd',
  'table',
  'caption',
  'tr',
  'td',
  'th',
]
const RENAMED: Record<string, string> = { h1: 'h2', h5: 'h4', h6: 'h4', hr: 'br', ...Object.fromEntries(BLOCKS.map((t) => [t, 'br'])) }

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...DESCRIPTION_TAGS],
  allowedAttributes: { a: ['href', 'rel'] },
  allowedSchemes: [...DESCRIPTION_LINK_SCHEMES],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: ['script', 'style'],
  transformTags: {
    ...Object.fromEntries(Object.entries(RENAMED).map(([from, to]) => [from, sanitizeHtml.simpleTransform(to, {}, false)])),
    a: (_tag, attribs): sanitizeHtml.Tag => {
      const href = (attribs.href ?? '').trim()
      return { tagName: 'a', attribs: ABSOLUTE_LINK.test(href) ? { href, rel: DESCRIPTION_LINK_REL } : {} }
    },
  },
  // A link left without its href is removed, its text kept. Not by renaming it to an element
  // outside the list: sanitize-html 2.18 then wrote the closing tag of the next kept sibling
  // under that name (`<a href="/x">t</a><b>y</b>` → `t<b>y</other>`, leaving the `b` open).
  exclusiveFilter: (frame) => (frame.tag === 'a' && !frame.attribs.href ? 'excludeTag' : false),
}

/** Characters without which a text is already what the sanitiser would write: no markup, no entity, nothing to escape. */
const MARKUP = /[<>&]/

/** `html` reduced to the allow-list of contract §15 (see above). */
export function sanitizeDescription(html: string): string {
  // Most descriptions are plain text: the parse would give them back unchanged (checked by the
  // unit tests over arbitrary strings), so it is skipped.
  if (!MARKUP.test(html)) return html
  return sanitizeHtml(html, OPTIONS)
}
