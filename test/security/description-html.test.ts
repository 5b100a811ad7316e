/**
 * The description allow-list (contract §15 §3 `description`) against the usual ways around a
 * sanitiser: case, entities, whitespace and control characters in schemes, SVG and MathML
 * parsing tricks, unclosed and nested tags, comments. Every output is also parsed back and
 * checked to hold only allowed elements, no attribute but a safe link's, and no script text;
 * description-browser.test.ts does the same with the DOM a browser builds from it.
 */
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { Parser } from 'htmlparser2'
import { DESCRIPTION_LINK_REL, DESCRIPTION_TAGS, sanitizeDescription } from '../../shared/listings/description-html'

/** What an output holds: its elements with their attributes, and its text. */
function parsed(html: string): { elements: { name: string; attribs: Record<string, string> }[]; text: string } {
  const elements: { name: string; attribs: Record<string, string> }[] = []
  let text = ''
  const parser = new Parser({ onopentag: (name, attribs) => elements.push({ name, attribs }), ontext: (t) => (text += t) }, { decodeEntities: true })
  parser.write(html)
  parser.end()
  return { elements, text }
}

/** The invariant every output keeps, whatever the input. */
function expectSafe(html: string): void {
  const out = sanitizeDescription(html)
  for (const { name, attribs } of parsed(out).elements) {
    expect(DESCRIPTION_TAGS as readonly string[], `<${name}> in ${JSON.stringify(out)}`).toContain(name)
    if (name === 'a') {
      expect(Object.keys(attribs).sort()).toEqual(['href', 'rel'])
      expect(attribs.href).toMatch(/^(https?:\/\/|mailto:)/i)
      expect(attribs.rel).toBe(DESCRIPTION_LINK_REL)
    } else {
      expect(attribs, `<${name}> attributes in ${JSON.stringify(out)}`).toEqual({})
    }
  }
  // Text is always escaped: a second pass finds markup only where the first wrote it.
  expect(parsed(sanitizeDescription(out)).text).toBe(parsed(out).text)
}

const XSS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.example/x.js></SCRIPT>',
  '<ScRiPt>alert(1)</sCrIpT>',
  '<img src=x onerror=alert(1)>',
  '<IMG SRC="javascript:alert(1)">',
  '<p onclick="alert(1)" ONMOUSEOVER=alert(1)>text</p>',
  '<b onmouseover=alert(1)>bold</b>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="  javascript:alert(1)">x</a>',
  '<a href="java\nscript:alert(1)">x</a>',
  '<a href="java&#x09;script:alert(1)">x</a>',
  '<a href="java&#9;script:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href="&#x6A;avascript&colon;alert(1)">x</a>',
  '<a href="javascript&colon;alert(1)">x</a>',
  '<a href="\u0001javascript:alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="DATA:text/html,<script>alert(1)</script>">x</a>',
  '<a href="//evil.example/">x</a>',
  '<a href="/relative">x</a>',
  '<a href="https://ok.example/" onclick="alert(1)" target="_blank" rel="opener" style="x">x</a>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><style><img src=x onerror=alert(1)></style></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
  '<math><mi><mglyph><style><img src=x onerror=alert(1)></style></mglyph></mi></math>',
  '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<object data="javascript:alert(1)"></object><embed src="x.swf">',
  '<body onload=alert(1)>',
  '<style>*{background:url(javascript:alert(1))}</style>',
  '<p style="background:url(javascript:alert(1))">x</p>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<link rel=stylesheet href="//evil.example/x.css">',
  '<!--<script>alert(1)</script>-->',
  '<![CDATA[<script>alert(1)</script>]]>',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</script>',
  '<p <script>alert(1)</script>>',
  '<b><i><p onclick=alert(1)>unclosed',
  '<a href="https://ok.example/"><a href="javascript:alert(1)">nested</a></a>',
  '<template><script>alert(1)</script></template>',
  '<textarea><script>alert(1)</script></textarea>',
  '<title><script>alert(1)</script></title>',
  '<xmp><script>alert(1)</script></xmp>',
  '<plaintext><script>alert(1)</script>',
  '<input autofocus onfocus=alert(1)>',
  '<details open ontoggle=alert(1)>',
  '<video><source onerror=alert(1)></video>',
  '"><script>alert(1)</script>',
  "'><img src=x onerror=alert(1)>",
  '&lt;script&gt;alert(1)&lt;/script&gt;',
  '<p>\u0000<script>alert(1)</script></p>',
]

describe('sanitizeDescription (contract §15 §3 description)', () => {
  test('keeps the allowed elements, as written', () => {
    const html =
      '<h2>Ático</h2><p>Con <strong>terraza</strong> y ' +
      '<em>vistas</em>.<br>Luminoso.</p><ul><li>Piscina</li><li><b>Garaje</b></li></ul><ol><li><i>Trastero</i></li></ol><h3>Zona</h3><h4>Metro</h4>'
    expect(sanitizeDescription(html)).toBe(html.replace('<br>', '<br />'))
  })

  test('a link keeps an absolute http(s) or mailto href, gets rel="nofollow noopener", and loses every other attribute', () => {
    expect(sanitizeDescription('<a href="https://agencia.example/piso?a=1&amp;b=2" target="_blank" onclick="x()" class="c">Ver</a>')).toBe(
      '<a href="https://agencia.example/piso?a=1&amp;b=2" rel="nofollow noopener">Ver</a>',
    )
    expect(sanitizeDescription('<A HREF="HTTP://agencia.example/" REL="opener">Ver</A>')).toBe(
      '<a href="HTTP://agencia.example/" rel="nofollow noopener">Ver</a>',
    )
    expect(sanitizeDescription('<a href=" mailto:info@agencia.example ">Escríbenos</a>')).toBe(
      '<a href="mailto:info@agencia.example" rel="nofollow noopener">Escríbenos</a>',
    )
  })

  test('scripts and styles go with their text; other elements, comments and attributes go, their text stays', () => {
    expect(sanitizeDescription('<p>Piso<script>alert(1)</script> luminoso</p><style>p{}</style>')).toBe('<p>Piso luminoso</p>')
    expect(sanitizeDescription('<SCRIPT>alert(1)</SCRIPT>Hola')).toBe('Hola')
    expect(sanitizeDescription('<span style="color:red" onclick="x()">Rojo</span> <img src=x onerror=alert(1)>y <!-- nota --><font>más</font>')).toBe(
      'Rojo y más',
    )
    expect(sanitizeDescription('<p id="a" class="b" style="c" onmouseover="d">x</p>')).toBe('<p>x</p>')
  })

  test('block containers leave a line break and other headings become the nearest allowed one, so the text keeps its breaks', () => {
    expect(sanitizeDescription('<div>Piscina</div><div class="x">Garaje</div>')).toBe('<br />Piscina<br />Garaje')
    expect(sanitizeDescription('<h1>Título</h1><h5>Nota</h5><h6>Pie</h6><hr>')).toBe('<h2>Título</h2><h4>Nota</h4><h4>Pie</h4><br />')
    expect(sanitizeDescription('<table><tr><td>a</td><td>b</td></tr></table>')).toBe('<br /><br /><br />a<br />b')
  })

  test('links with any other scheme, or none, lose their element and keep their text', () => {
    for (const href of [
      'javascript:alert(1)',
      'JAVASCRIPT:alert(1)',
      ' javascript:alert(1)',
      'java&#x09;script:alert(1)',
      'java&Tab;script:alert(1)',
      'javascript&colon;alert(1)',
      '&#x6A;avascript:alert(1)',
      'data:text/html,hi',
      'vbscript:x',
      'file:///etc/passwd',
      'ftp://x.example/',
      '//evil.example/',
      '/path',
      'page.html',
      '#top',
      '',
      'https:',
      'https://',
      'mailto',
    ]) {
      expect(sanitizeDescription(`<a href="${href}">texto</a>`), href).toBe('texto')
    }
    expect(sanitizeDescription('<a>sin enlace</a>')).toBe('sin enlace')
    expect(sanitizeDescription('<p><a href="/x">uno</a> <b>dos</b> <a href="https://x.example/">tres</a><i>cuatro</i></p>')).toBe(
      '<p>uno <b>dos</b> <a href="https://x.example/" rel="nofollow noopener">tres</a><i>cuatro</i></p>',
    )
    expect(sanitizeDescription('<a href="javascript:x"><a href="mailto:a@b.example">m</a>')).toBe('<a href="mailto:a@b.example" rel="nofollow noopener">m</a>')
  })

  test('unclosed and stray tags are closed or dropped; text that looks like markup is escaped', () => {
    expect(sanitizeDescription('<p>abierto <b>negrita')).toBe('<p>abierto <b>negrita</b></p>')
    // A stray </p> is an empty paragraph, as a browser reads it.
    expect(sanitizeDescription('</p></b>texto</li>')).toBe('<p></p>texto')
    expect(sanitizeDescription('5 < 6 & 7 > 3')).toBe('5 &lt; 6 &amp; 7 &gt; 3')
    expect(sanitizeDescription('&lt;script&gt;alert(1)&lt;/script&gt;')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(sanitizeDescription('<<script>script>alert(1)<</script>/script>')).not.toContain('<script')
  })

  test('the usual bypasses come out with allowed elements only, no handler, no dangerous link, no script text', () => {
    for (const html of XSS) {
      expectSafe(html)
      const out = sanitizeDescription(html)
      expect(out, html).not.toMatch(
        /<(script|img|svg|math|iframe|style|object|embed|meta|base|link|form|input|template|textarea|title|noscript|body|details|video|source)\b/i,
      )
      expect(
        parsed(out).elements.some((e) => Object.keys(e.attribs).some((a) => a.startsWith('on'))),
        html,
      ).toBe(false)
      expect(out.toLowerCase(), html).not.toMatch(/(javascript|vbscript|data):/)
    }
  })

  test('script text is removed, wherever the script is', () => {
    for (const html of [
      '<script>alert(1)</script>',
      '<svg><script>alert(1)</script></svg>',
      '<p><script>alert(1)</script></p>',
      '<SCRIPT type="text/javascript">alert(1)</SCRIPT>',
    ]) {
      expect(parsed(sanitizeDescription(html)).text, html).not.toContain('alert(1)')
    }
  })

  test('any string: the output holds only the allow-list', () => {
    const tag = fc.constantFrom(
      'p',
      'b',
      'a',
      'script',
      'style',
      'svg',
      'math',
      'img',
      'div',
      'li',
      'ul',
      'h1',
      'h2',
      'h5',
      'td',
      'table',
      'SCRIPT',
      'A',
      'iframe',
      'br',
      'hr',
      'noscript',
      'textarea',
      'title',
    )
    const attr = fc.constantFrom(
      ' href="javascript:alert(1)"',
      ' href="https://x.example/"',
      ' onclick="alert(1)"',
      ' src=x onerror=alert(1)',
      " href='mailto:a@b.example'",
      ' href=data:x',
      '',
      ' style="x"',
    )
    const piece = fc.oneof(
      fc.string(),
      fc.tuple(tag, attr).map(([t, a]) => `<${t}${a}>`),
      tag.map((t) => `</${t}>`),
      fc.constantFrom('<!--', '-->', '<![CDATA[', ']]>', '&lt;', '&#x6A;', '&colon;', '<', '>', '"', "'", '&'),
    )
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => expectSafe(pieces.join(''))),
      { numRuns: 2000 },
    )
  })

  test('text without <, > or & comes back unchanged (the parse is skipped for it)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }).filter((s) => !/[<>&]/.test(s)),
        (s) => {
          expect(sanitizeDescription(s)).toBe(s)
          // What the parse would have written: the same text.
          expect(sanitizeDescription(`${s}&`)).toBe(`${s}&amp;`)
        },
      ),
      { numRuns: 2000 },
    )
  })
})
