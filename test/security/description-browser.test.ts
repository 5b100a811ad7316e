/**
 * What a browser builds from a sanitised description (contract §15 §3 `description`): Debian's
 * headless Chromium parses each output as a portal would insert it (`innerHTML` of an element
 * in a page), and the DOM it builds must hold only allowed elements, no attribute but a link's
 * `href` (http, https or mailto) and `rel`, and no script. The parser that sanitises is not the
 * browser's, so this is the check that counts: outputs of the usual bypasses and of generated
 * hostile markup, including ones a browser nests differently than they were written.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import fc from 'fast-check'
import { chromium, type Browser, type Page } from 'playwright-core'
import { DESCRIPTION_LINK_REL, DESCRIPTION_TAGS, sanitizeDescription } from '../../shared/listings/description-html'

const CHROMIUM = '/usr/bin/chromium'

/** The page's DOM, inside page.evaluate (the project compiles without the DOM library). */
declare const document: any

let browser: Browser
let page: Page

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM}: this test needs Debian's package (apt-get install -y chromium)`)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  })
  page = await browser.newPage()
  await page.setContent('<!doctype html><html><head><meta charset="utf-8"></head><body></body></html>')
}, 60_000)

afterAll(async () => {
  await browser?.close()
}, 30_000)

/** Each output inserted into the page; what in the DOM it built breaks the allow-list (empty when nothing). */
async function violations(outputs: string[]): Promise<string[]> {
  return page.evaluate(
    ({ outputs, allowed, rel }) => {
      const found: string[] = []
      for (const html of outputs) {
        const host = document.createElement('div')
        host.innerHTML = html
        document.body.appendChild(host)
        for (const el of Array.from<any>(host.querySelectorAll('*'))) {
          const name = el.localName
          const where = `${JSON.stringify(html).slice(0, 200)}: <${name}>`
          if (!allowed.includes(name) || el.namespaceURI !== 'http://www.w3.org/1999/xhtml') found.push(`${where} is not allowed`)
          const attrs = Array.from<any>(el.attributes)
            .map((a) => a.name as string)
            .sort()
          if (name === 'a') {
            if (attrs.join(',') !== 'href,rel') found.push(`${where} has attributes ${attrs.join(',')}`)
            const protocol: string = el.protocol
            if (!['http:', 'https:', 'mailto:'].includes(protocol)) found.push(`${where} links to ${protocol}`)
            if (el.getAttribute('rel') !== rel) found.push(`${where} rel ${el.getAttribute('rel')}`)
          } else if (attrs.length) found.push(`${where} has attributes ${attrs.join(',')}`)
        }
        host.remove()
      }
      return found
    },
    { outputs, allowed: [...DESCRIPTION_TAGS] as string[], rel: DESCRIPTION_LINK_REL },
  )
}

const BYPASSES = [
  '<script>alert(1)</script>',
  '<ScRiPt>alert(1)</sCrIpT>',
  '<img src=x onerror=alert(1)>',
  '<p onclick=alert(1)>x</p>',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="java&#x09;script:alert(1)">x</a>',
  '<a href="&#x6A;avascript&colon;alert(1)">x</a>',
  '<a href="data:text/html,<script>alert(1)</script>">x</a>',
  '<a href="//evil.example/">x</a>',
  '<a href=" https://ok.example/ " onclick=x>ok</a>',
  '<svg onload=alert(1)>',
  '<svg><style><img src=x onerror=alert(1)></style></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
  '<math><mi><mglyph><style><img src=x onerror=alert(1)></style></mglyph></mi></math>',
  '<math><mtext><table><mglyph><style><!--</style><img title="--&gt;&lt;img src=1 onerror=alert(1)&gt;">',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '<!--<img src=x onerror=alert(1)>-->',
  '<![CDATA[<img src=x onerror=alert(1)>]]>',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</script>',
  '<p <img src=x onerror=alert(1)>>',
  '<b><i><p onclick=alert(1)>unclosed',
  '<a href="https://ok.example/"><a href="javascript:alert(1)">nested</a></a>',
  '<template><img src=x onerror=alert(1)></template>',
  '<textarea></textarea><img src=x onerror=alert(1)>',
  '<title></title><img src=x onerror=alert(1)>',
  '<xmp><img src=x onerror=alert(1)></xmp>',
  '<p>a<span>b<p>c',
  '<table><tr><td>a<p>b</td></tr></table>',
  '<li><ul><li>x',
  '"><img src=x onerror=alert(1)>',
  '<a href="https://ok.example/" <img src=x onerror=alert(1)>>x</a>',
]

describe('sanitised descriptions in a browser (contract §15 §3 description)', () => {
  test('the usual bypasses build only allowed elements and safe links', async () => {
    expect(await violations(BYPASSES.map(sanitizeDescription))).toEqual([])
  }, 60_000)

  test('generated hostile markup builds only allowed elements and safe links', async () => {
    const tag = fc.constantFrom(
      'p',
      'b',
      'i',
      'a',
      'li',
      'ul',
      'h2',
      'script',
      'style',
      'svg',
      'math',
      'mglyph',
      'mtext',
      'img',
      'div',
      'table',
      'td',
      'form',
      'noscript',
      'textarea',
      'title',
      'template',
      'iframe',
      'select',
      'option',
    )
    const attr = fc.constantFrom(
      '',
      ' href="javascript:alert(1)"',
      ' href="https://ok.example/"',
      " href='mailto:a@b.example'",
      ' onclick="alert(1)"',
      ' src=x onerror=alert(1)',
      ' title="</p><img src=x onerror=alert(1)>"',
    )
    const piece = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.tuple(tag, attr).map(([t, a]) => `<${t}${a}>`),
      tag.map((t) => `</${t}>`),
      fc.constantFrom('<!--', '-->', '<![CDATA[', ']]>', '&lt;', '&#x6A;', '<', '>', '"', '&'),
    )
    const inputs = fc.sample(
      fc.array(piece, { maxLength: 25 }).map((p) => p.join('')),
      3000,
    )
    expect(await violations(inputs.map(sanitizeDescription))).toEqual([])
  }, 60_000)
})
