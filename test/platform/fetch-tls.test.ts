/**
 * Connecting to the checked address keeps TLS verified against the host name
 * (shared/platform/fetch.ts): the request goes to 127.0.0.1 while the certificate must name the
 * URL's host. The certificates are test-only (a CA and a leaf for fetch-test.example, valid
 * 2000–2099, keys below); nothing trusts them outside these child processes.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'

const CA = `-----BEGIN CERTIFICATE-----
MIIBZDCCAQqgAwIBAgICEAAwCgYIKoZIzj0EAwIwGDEWMBQGA1UEAwwNZmV0Y2gt
dGVzdCBDQTAgFw0wMDAxMDEwMDAwMDBaGA8yMDk5MTIzMTAwMDAwMFowGDEWMBQG
A1UEAwwNZmV0Y2gtdGVzdCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABPk6
sDsZ88o+FApG8liBxT5NAXCfApbdef/ilgln9Ba9/8AMmQpo0YfFeukmLjyStrw1
8hFyMXs4N5tcIJTGGd+jQjBAMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0PAQH/BAQD
AgIEMB0GA1UdDgQWBBSEMvD56R6LQMiMMg3iOFDCytCVzTAKBggqhkjOPQQDAgNI
ADBFAiBzcruVTJ/s0wSJXpGWmCIzeVG3Nr5Z/VQGJkGt8WyULAIhAOrdLeNTX94v
SwcU83mO0mmPKj+j7e9PRmiGb5cK44e3
-----END CERTIFICATE-----
`
const LEAF_CERT = `-----BEGIN CERTIFICATE-----
MIIBqTCCAU+gAwIBAgICEAEwCgYIKoZIzj0EAwIwGDEWMBQGA1UEAwwNZmV0Y2gt
dGVzdCBDQTAgFw0wMDAxMDEwMDAwMDBaGA8yMDk5MTIzMTAwMDAwMFowHTEbMBkG
A1UEAwwSZmV0Y2gtdGVzdC5leGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD
QgAERmqslDTfGrkYAU7guMIl4klnLbkzTWa/HtOv+VJdW+Q7iUL6DKFfyWR0l7s9
dmvDQy2+EvZfh/lUxqHddC4W+qOBgTB/MB0GA1UdEQQWMBSCEmZldGNoLXRlc3Qu
ZXhhbXBsZTAJBgNVHRMEAjAAMBMGA1UdJQQMMAoGCCsGAQUFBwMBMB8GA1UdIwQY
MBaAFIQy8PnpHotAyIwyDeI4UMLK0JXNMB0GA1UdDgQWBBRVXsh8azmZXA48l5C+
Oj2waqn1QTAKBggqhkjOPQQDAgNIADBFAiBDk2X7pHCsNZB2I5w2nIUTt263dsWv
Wtf9xDQcAJmSUwIhAPXOlVFyhmho8ee/d9jMpKBGnBb6VO+vCu0eLYCK9Lbs
-----END CERTIFICATE-----
`
const LEAF_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgDJz+ptVArDXRDFsm
BMuh5WuXPQxKtrVjqMDFMFNs7vmhRANCAARGaqyUNN8auRgBTuC4wiXiSWctuTNN
Zr8e06/5Ul1b5DuJQvoMoV/JZHSXuz12a8NDLb4S9l+H+VTGod10Lhb6
-----END PRIVATE KEY-----
`

let server: Server<undefined>
let dir: string
let caFile: string
beforeAll(() => {
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: LEAF_CERT, key: LEAF_KEY },
    fetch: (req) => new Response(`host ${req.headers.get('host')}`),
  })
  dir = mkdtempSync(join(tmpdir(), 'fetch-tls-'))
  caFile = join(dir, 'ca.pem')
  writeFileSync(caFile, CA)
})
afterAll(() => {
  server.stop(true)
  rmSync(dir, { recursive: true, force: true })
})

async function fetchInChild(host: string, trustTestCa: boolean): Promise<Record<string, unknown>> {
  const env: Record<string, string | undefined> = { ...process.env, FETCH_TLS_URL: `https://${host}:${server.port}/` }
  env.NODE_EXTRA_CA_CERTS = trustTestCa ? caFile : undefined
  const proc = Bun.spawn(['bun', join(import.meta.dir, 'fetch-tls-child.ts')], { env, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expect({ code, err }).toEqual({ code: 0, err: '' })
  return JSON.parse(out)
}

test('the certificate is verified against the host name while the connection goes to the checked address', async () => {
  expect(await fetchInChild('fetch-test.example', true)).toEqual({ status: 200, body: `host fetch-test.example:${server.port}` })
})

test('a certificate for another name fails the request', async () => {
  expect(await fetchInChild('other.example', true)).toEqual({ code: 'connection_failed', cause: 'ERR_TLS_CERT_ALTNAME_INVALID' })
})

test('an untrusted certificate fails the request (verification stays on)', async () => {
  expect(await fetchInChild('fetch-test.example', false)).toMatchObject({ code: 'connection_failed' })
})
