import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

/** A stand-in epay provider on 127.0.0.1: records each form posted to /submit.php and shows a page. */
export async function startPayProvider (t: Test): Promise<{ url: string, forms: Array<Record<string, string>> }> {
  const forms: Array<Record<string, string>> = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => { body += chunk })
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/submit.php') forms.push(Object.fromEntries(new URLSearchParams(body)))
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Pay</title><h1>Payment page</h1>')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => { resolve() }) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, forms }
}
