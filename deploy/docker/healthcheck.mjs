// The images' HEALTHCHECK: GET /healthz (alive) on the port of the service whose folder is the
// working directory (/app/services/<service>); exit 0 on 200, 1 otherwise.
/* global fetch, AbortSignal */
import { readFileSync } from 'node:fs'
import process from 'node:process'

const ports = {
  '@modelgate/gateway': ['PORT', 3000],
  '@modelgate/control-plane': ['CONTROL_PLANE_PORT', 3001],
  '@modelgate/billing-worker': ['BILLING_WORKER_PORT', 3002]
}
const { name } = JSON.parse(readFileSync('package.json', 'utf8'))
const [variable, fallback] = ports[name] ?? []
if (variable === undefined) {
  process.stderr.write(`healthcheck: ${name} is not a service\n`)
  process.exit(1)
}
// eslint-disable-next-line no-restricted-syntax -- outside the services: reads the port they read
const port = process.env[variable] || fallback
const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2500) }).catch(() => undefined)
process.exit(res?.status === 200 ? 0 : 1)
